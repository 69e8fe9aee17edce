package io.ackpoint.storage;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.HeadedBatch;
import io.vertx.core.Future;

import java.util.List;

/**
 * Stores a batch at the source's current head and writes the source's marker, in one round trip:
 * possible when the source is storage's own PostgreSQL database. The head is read inside the batch
 * statement, and the marker is sent on the same connection right behind it.
 *
 * <p>Why the marker is a statement of its own, not part of the batch's transaction: PostgreSQL makes
 * a transaction visible a moment after its commit record is flushed, and logical decoding may ship
 * a marker committed with the rows within that moment. An acknowledgement statement run then would
 * not see the rows, which would wait for the next position (the heartbeat, on an idle database:
 * seconds). A connection runs its statements one after the other, so the marker behind the batch
 * runs once the batch is committed and visible, as when it was sent after the answer came back.
 */
@FunctionalInterface
public interface HeadStoringWriter {

  Future<HeadedBatch> storeAtCurrentHead(List<CheckpointWrite> writes);
}
