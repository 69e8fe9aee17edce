package io.ackpoint.batch;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.HeadedBatch;
import io.vertx.core.Future;

import java.util.List;

/**
 * The batcher's one operation: store a batch at the source's current head, and see to it that
 * replication observes a position at or past that head when any checkpoint of it is pending.
 */
@FunctionalInterface
interface BatchWriter {

  /** Each full user id appears at most once in {@code writes}. */
  Future<HeadedBatch> write(List<CheckpointWrite> writes);
}
