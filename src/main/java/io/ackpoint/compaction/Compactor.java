package io.ackpoint.compaction;

import io.ackpoint.storage.CheckpointStorage;
import io.ackpoint.storage.CompactionStep;
import io.vertx.core.Future;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * One compaction: deletes expired client-requested checkpoints in bounded steps until storage
 * says the last one is done. Each batch is its own short statement, so checkpoint traffic is never stuck
 * behind a long lock on a big table.
 */
public final class Compactor {

  /** What one compaction did. */
  public record Result(long deleted, int batches) {
  }

  private final CheckpointStorage storage;
  private final Duration retention;
  private final int batchSize;
  private final Clock clock;

  public Compactor(CheckpointStorage storage, Duration retention, int batchSize, Clock clock) {
    this.storage = storage;
    this.retention = retention;
    this.batchSize = batchSize;
    this.clock = clock;
  }

  public Future<Result> run() {
    // One cut-off for the whole run: rows refreshed while it runs are not chased.
    return next(clock.instant().minus(retention), CompactionStep.START, 0, 0);
  }

  private Future<Result> next(Instant cutoff, long from, long deleted, int batches) {
    return storage.deleteExpiredRequests(cutoff, batchSize, from).compose(step -> {
      long total = deleted + step.deleted();
      if (step.next() == null) {
        return Future.succeededFuture(new Result(total, batches + 1));
      }
      return next(cutoff, step.next(), total, batches + 1);
    });
  }
}
