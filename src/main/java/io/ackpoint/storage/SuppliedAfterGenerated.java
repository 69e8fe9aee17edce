package io.ackpoint.storage;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.WriteOutcome;
import io.vertx.core.Future;

import java.util.List;
import java.util.function.BinaryOperator;
import java.util.function.Function;

/**
 * Stores a batch in which a user's write is both generated and supplied (both kinds of request came
 * in one loop turn) as two batches in turn: every write's generated part first, then those writes'
 * supplied ids. That is the serial order {@link CheckpointWrite} promises, and it leaves each
 * statement one kind of write per user, which {@link PgStatements#UPSERT_BATCH} needs. The two are
 * not one transaction: another batch may come between them, which is a serial order too.
 */
final class SuppliedAfterGenerated {

  private SuppliedAfterGenerated() {
  }

  /**
   * Stores {@code writes} with {@code store}, in two turns if a write is both generated and
   * supplied; {@code plus} puts the two turns' results together, answering a user of both with
   * {@link #merge}.
   */
  static <B> Future<B> store(List<CheckpointWrite> writes, Function<List<CheckpointWrite>, Future<B>> store,
                             BinaryOperator<B> plus) {
    List<CheckpointWrite> supplied = writes.stream().filter(SuppliedAfterGenerated::both)
        .map(w -> CheckpointWrite.requested(w.user(), w.requestedId())).toList();
    if (supplied.isEmpty()) {
      return store.apply(writes);
    }
    List<CheckpointWrite> generated = writes.stream().map(w -> both(w) ? CheckpointWrite.generated(w.user()) : w).toList();
    return store.apply(generated).compose(first -> store.apply(supplied).map(second -> plus.apply(first, second)));
  }

  private static boolean both(CheckpointWrite write) {
    return write.generated() && write.requestedId() != null;
  }

  /**
   * One user's outcome: the generated id of the first turn (or its exhaustion), with the id, the
   * state and the head the row holds after the second. A turn that stored nothing for the user
   * answers for it: the user's requests fail and its clients retry (a supplied id sent again is the
   * same write; a generated id that the first turn made is then left unused, and ids need only grow).
   */
  static WriteOutcome merge(WriteOutcome generated, WriteOutcome supplied) {
    if (!(generated instanceof WriteOutcome.Stored || generated instanceof WriteOutcome.Exhausted)) {
      return generated;
    }
    if (!(supplied instanceof WriteOutcome.Stored s)) {
      return supplied;
    }
    return generated instanceof WriteOutcome.Stored g
        ? new WriteOutcome.Stored(s.checkpoint(), g.generated(), s.pending(), s.pendingHead())
        : new WriteOutcome.Exhausted(s.checkpoint(), s.pending());
  }
}
