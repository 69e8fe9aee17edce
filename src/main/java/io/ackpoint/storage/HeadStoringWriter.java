package io.ackpoint.storage;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.HeadedBatch;
import io.vertx.core.Future;

import java.util.List;

/**
 * Stores a batch at the source's current head and writes the source's marker, in one round trip:
 * possible when the source is storage's own PostgreSQL database. The head is read inside the batch
 * statement, and the marker is written inside its transaction, or sent on the same connection
 * right behind it.
 *
 * <p>PostgreSQL makes a transaction visible a moment after its commit record is flushed (longer with
 * a synchronous standby, which the commit waits for in between), and logical decoding may ship a
 * marker committed with the rows within that moment: an acknowledgement statement run then does not
 * see the rows. On a standalone Ackpoint that costs milliseconds at most, so the marker is committed
 * with the rows (one commit per batch, not two): the engine runs on the same node and learns each
 * batch's pending checkpoints from its answer, which comes once the rows are visible; a checkpoint
 * whose head a position passed before its answer came is told to its streams at once and recorded
 * by the engine's next statement, which starts within AckEngine's RECORD_MS if no position starts
 * it sooner (see AckEngine#pending, #recordSoon). On a node of a cluster the engine may run on
 * another node, which never learns of this node's batches and would leave such a checkpoint to the
 * next position (on an idle database, the heartbeat): there the marker is a statement of its own
 * behind the batch, which a connection runs once the batch is committed and visible.
 */
@FunctionalInterface
public interface HeadStoringWriter {

  Future<HeadedBatch> storeAtCurrentHead(List<CheckpointWrite> writes);
}
