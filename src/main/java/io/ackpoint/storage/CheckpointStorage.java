package io.ackpoint.storage;

import io.vertx.core.Future;

import java.util.List;

/** Where write checkpoints are kept: one logical row per full user id. */
public interface CheckpointStorage {

  /**
   * Stores a batch at {@code head} in a constant number of round trips, whatever its size. Each full
   * user id appears at most once in {@code writes}.
   */
  Future<StoredBatch> store(String head, List<CheckpointWrite> writes);

  /**
   * Marks every pending checkpoint whose head is at or before {@code position} as processed at it,
   * in one statement, and answers those checkpoints.
   */
  Future<List<Reached>> markProcessed(String position);

  /** The greatest acknowledged id of a full user id, or {@code null} if none is acknowledged. */
  Future<Long> latestAcknowledged(String userId);

  /** Succeeds when storage answers a trivial query. */
  Future<Void> ping();

  Future<Void> close();
}
