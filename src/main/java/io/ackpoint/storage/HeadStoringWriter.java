package io.ackpoint.storage;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.HeadedBatch;
import io.vertx.core.Future;

import java.util.List;

/**
 * Stores a batch at the source's current head and writes its marker, in one statement and one
 * commit: possible when the source is storage's own PostgreSQL database.
 *
 * <p>Why one commit is enough: the marker is a transactional logical message, which logical
 * decoding delivers at its transaction's commit, never before; by then the rows it covers are
 * committed with it. A head read inside the statement is at or after every write the clients
 * committed before they asked, as a head read before it would be. The one thing not ordered is
 * visibility: PostgreSQL makes a transaction visible a moment after its commit record is flushed,
 * and an acknowledgement statement that runs in that moment does not see the rows yet. They then
 * stay pending (never acknowledged early) until the next position: the next batch's marker or, on
 * an idle database, the heartbeat.
 */
@FunctionalInterface
public interface HeadStoringWriter {

  Future<HeadedBatch> storeAtCurrentHead(List<CheckpointWrite> writes);
}
