package io.ackpoint.batch;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.StoredBatch;
import io.ackpoint.core.WriteOutcome;
import io.ackpoint.storage.RejectedWriteException;
import io.vertx.core.Future;

import java.util.List;
import java.util.Map;
import java.util.function.BinaryOperator;
import java.util.function.Function;

/**
 * Keeps one user's unstorable data from failing everybody's batch. When the database rejects the
 * data of a batch, the batch is split in halves and each half written on its own, down to the single
 * write that is rejected; every other write is stored as usual. Failures of the database itself
 * (unreachable, timed out) are not split: they fail the whole batch.
 *
 * <p>Input validation keeps rejections from happening at all; this is the guarantee for whatever
 * validation does not foresee, and costs nothing while no batch is rejected.
 *
 * @param <T> what a write answers: a stored batch, or one stored at its own head
 */
final class IsolatingWriter<T> {

  private final Function<List<CheckpointWrite>, Future<T>> delegate;
  private final BinaryOperator<T> plus;
  private final Function<StoredBatch, T> alone;

  /**
   * {@code plus} joins the answers of two halves; {@code alone} makes the answer of a single
   * rejected write from its outcome (nothing stored, nothing pending).
   */
  IsolatingWriter(Function<List<CheckpointWrite>, Future<T>> delegate, BinaryOperator<T> plus, Function<StoredBatch, T> alone) {
    this.delegate = delegate;
    this.plus = plus;
    this.alone = alone;
  }

  Future<T> write(List<CheckpointWrite> writes) {
    return delegate.apply(writes).recover(failure -> {
      if (!(failure instanceof RejectedWriteException rejected)) {
        return Future.failedFuture(failure);
      }
      if (writes.size() == 1) {
        return Future.succeededFuture(alone.apply(new StoredBatch(
            Map.of(writes.get(0).user(), new WriteOutcome.Rejected(rejected.getMessage())), false)));
      }
      int half = writes.size() / 2;
      return write(writes.subList(0, half)).compose(first -> write(writes.subList(half, writes.size())).map(
          second -> plus.apply(first, second)));
    });
  }
}
