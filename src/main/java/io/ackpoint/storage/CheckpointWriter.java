package io.ackpoint.storage;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.StoredBatch;
import io.vertx.core.Future;

import java.util.List;

/** The one storage operation the batcher needs. */
@FunctionalInterface
public interface CheckpointWriter {

  /**
   * Stores a batch at {@code head} in a constant number of round trips, whatever its size. Each full
   * user id appears at most once in {@code writes}.
   */
  Future<StoredBatch> store(String head, List<CheckpointWrite> writes);
}
