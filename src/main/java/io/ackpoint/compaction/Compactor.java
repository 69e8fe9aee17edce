package io.ackpoint.compaction;

import io.ackpoint.core.Steps;
import io.ackpoint.storage.CheckpointStorage;
import io.ackpoint.storage.CompactionStep;
import io.vertx.core.Future;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * One compaction: deletes expired client-requested checkpoints in bounded steps until storage
 * says the last one is done. Each step is its own short statement, so checkpoint traffic is never
 * stuck behind a long lock on a big table.
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
    Instant cutoff = clock.instant().minus(retention);
    return Steps.until(new Walk(CompactionStep.START, 0, 0), walk -> walk.from() == null,
        walk -> storage.deleteExpiredRequests(cutoff, batchSize, walk.from())
            .map(step -> new Walk(step.next(), walk.deleted() + step.deleted(), walk.batches() + 1)))
        .map(walk -> new Result(walk.deleted(), walk.batches()));
  }

  /** Where a run is: the next step's start ({@code null}: done), and what it did so far. */
  private record Walk(Long from, long deleted, int batches) {
  }
}
