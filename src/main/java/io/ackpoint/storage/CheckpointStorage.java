package io.ackpoint.storage;

import io.ackpoint.core.CustomCheckpoint;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.Reached;
import io.vertx.core.Future;

import java.time.Instant;
import java.util.List;

/**
 * Where write checkpoints are kept: one logical row per full user id. Implementations share their
 * connections with every verticle of the process; whoever made them closes them.
 */
public interface CheckpointStorage extends CheckpointWriter {

  /**
   * Stores custom checkpoints seen on the replication stream at {@code position}, as pending rows
   * at that position (the next {@link #markProcessed} acknowledges them). An id only ever grows;
   * request rows get {@code checkpoint_requested_at}, persistent ones none. The future succeeds only
   * once the rows are durable.
   */
  Future<Void> storeCustom(String position, List<CustomCheckpoint> checkpoints);

  /**
   * Marks every pending checkpoint whose head is at or before {@code position} as processed at it,
   * in one statement, and answers one {@link Reached} per full user id: the greatest id marked.
   */
  Future<List<Reached>> markProcessed(String position);

  /**
   * Whether a {@link #markProcessed} that failed with {@code failure} may have marked checkpoints
   * all the same: its answer lost after the commit (a connection cut, a server crash). Only a
   * failure that says the database refused the statement rules that out.
   */
  default boolean mayHaveMarked(Throwable failure) {
    return true;
  }

  /**
   * The greatest acknowledged id of a full user id, with the position it was marked processed at
   * when storage still holds it, or {@code null} if none is acknowledged.
   */
  Future<Acknowledged> latestAcknowledged(FullUserId user);

  /**
   * One bounded step of a compaction: deletes at most {@code limit} client-requested checkpoints
   * that were last requested before {@code requestedBefore} and are already processed, starting at
   * {@code from} ({@link CompactionStep#START}, then each step's {@link CompactionStep#next}).
   * Generated rows (never requested) and pending rows are never deleted.
   */
  Future<CompactionStep> deleteExpiredRequests(Instant requestedBefore, int limit, long from);

  /** How many checkpoint rows storage holds. */
  Future<Long> count();

  /**
   * Succeeds when storage answers a trivial query; fails with a {@link ReadOnlyStorageException} when
   * it answers but would take no write.
   */
  Future<Void> ping();
}
