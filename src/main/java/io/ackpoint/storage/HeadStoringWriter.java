package io.ackpoint.storage;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.HeadedBatch;
import io.vertx.core.Future;

import java.util.List;

/**
 * Stores a batch at the source's current head and writes the source's marker, in one round trip:
 * possible when the source is storage's own PostgreSQL database. The head is read inside the batch
 * statement, and the marker is written inside its transaction: one commit per batch.
 *
 * <p>PostgreSQL makes a transaction visible a moment after its commit record is flushed (longer with
 * a synchronous standby, which the commit waits for in between), and logical decoding may ship a
 * marker committed with the rows within that moment: an acknowledgement statement run then does not
 * see the rows. That costs milliseconds at most: the acknowledgement engine learns each batch's
 * pending checkpoints from its answer, which comes once the rows are visible (the batcher sends
 * them to the engine, on another node of a cluster too); a checkpoint whose head a position passed
 * before its answer came is told to its streams at once and recorded by the engine's next
 * statement, which starts within AckEngine's RECORD_MS if no position starts it sooner (see
 * AckEngine#pending, #recordSoon). Only if that message is lost (the engine's node stops as it
 * arrives, a node that took the lead is not yet known to the sender, or the leader runs a version
 * that does not take it from other nodes) or never sent (the batch's answer is lost or timed out
 * after its commit) does such a checkpoint wait for the next position: under load the next batch's
 * marker, on an idle database the follower's heartbeat.
 */
@FunctionalInterface
public interface HeadStoringWriter {

  Future<HeadedBatch> storeAtCurrentHead(List<CheckpointWrite> writes);
}
