package io.ackpoint.batch;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.StoredBatch;
import io.ackpoint.core.WriteOutcome;
import io.ackpoint.storage.CheckpointWriter;
import io.ackpoint.storage.RejectedWriteException;
import io.vertx.core.Future;

import java.util.List;
import java.util.Map;

/**
 * Keeps one user's unstorable data from failing everybody's batch. When the database rejects the
 * data of a batch, the batch is split in halves and each half stored on its own, down to the single
 * write that is rejected; every other write is stored as usual. Failures of the database itself
 * (unreachable, timed out) are not split: they fail the whole batch.
 *
 * <p>Input validation keeps rejections from happening at all; this is the guarantee for whatever
 * validation does not foresee, and costs nothing while no batch is rejected.
 */
final class IsolatingWriter implements CheckpointWriter {

  private final CheckpointWriter delegate;

  IsolatingWriter(CheckpointWriter delegate) {
    this.delegate = delegate;
  }

  @Override
  public Future<StoredBatch> store(String head, List<CheckpointWrite> writes) {
    return delegate.store(head, writes).recover(failure -> {
      if (!(failure instanceof RejectedWriteException rejected)) {
        return Future.failedFuture(failure);
      }
      if (writes.size() == 1) {
        return Future.succeededFuture(new StoredBatch(
            Map.of(writes.get(0).user(), new WriteOutcome.Rejected(rejected.getMessage())), false));
      }
      int half = writes.size() / 2;
      return store(head, writes.subList(0, half))
          .compose(first -> store(head, writes.subList(half, writes.size())).map(first::plus));
    });
  }
}
