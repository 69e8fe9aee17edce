package io.ackpoint.storage;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.StoredBatch;
import io.ackpoint.core.WriteOutcome;
import io.vertx.core.Future;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Stores a batch in attempts, for both backends. An attempt stores what it can and hands back the
 * writes it could not store because their rows changed under it (a concurrent batch created or
 * raised them); only those go again, so each attempt is smaller and contention ends quickly. Users
 * still contended after the last attempt are answered {@link WriteOutcome.Contended}; everything
 * stored before keeps its outcome.
 */
final class Attempts {

  /** What one attempt did: the outcomes it settled, whether any is pending, and the writes to retry. */
  record Attempt(Map<FullUserId, WriteOutcome> outcomes, boolean pending, List<CheckpointWrite> again) {
  }

  private Attempts() {
  }

  static Future<StoredBatch> run(List<CheckpointWrite> writes, int maxAttempts,
                                 Function<List<CheckpointWrite>, Future<Attempt>> attempt) {
    return next(writes, maxAttempts, attempt, new HashMap<>(), false, 1);
  }

  private static Future<StoredBatch> next(List<CheckpointWrite> writes, int maxAttempts,
                                          Function<List<CheckpointWrite>, Future<Attempt>> attempt,
                                          Map<FullUserId, WriteOutcome> outcomes, boolean pending, int number) {
    return attempt.apply(writes).compose(done -> {
      outcomes.putAll(done.outcomes());
      boolean anyPending = pending || done.pending();
      if (done.again().isEmpty()) {
        return Future.succeededFuture(new StoredBatch(outcomes, anyPending));
      }
      if (number >= maxAttempts) {
        done.again().forEach(w -> outcomes.put(w.user(), new WriteOutcome.Contended()));
        return Future.succeededFuture(new StoredBatch(outcomes, anyPending));
      }
      return next(done.again(), maxAttempts, attempt, outcomes, anyPending, number + 1);
    });
  }
}
