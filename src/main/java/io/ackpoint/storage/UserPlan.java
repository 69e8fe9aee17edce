package io.ackpoint.storage;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.PositionFormat;
import io.ackpoint.core.WriteOutcome;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.mongo.BulkOperation;
import org.bson.types.ObjectId;

import java.util.ArrayList;
import java.util.List;

import static io.ackpoint.storage.CheckpointDocument.ACKNOWLEDGED;
import static io.ackpoint.storage.CheckpointDocument.CHECKPOINT;
import static io.ackpoint.storage.CheckpointDocument.ID;
import static io.ackpoint.storage.CheckpointDocument.LSNS;
import static io.ackpoint.storage.CheckpointDocument.PROCESSED;
import static io.ackpoint.storage.CheckpointDocument.REQUESTED;

/**
 * What one batch does to one full user id's MongoDB documents, decided from the documents as they
 * were read, with the semantics of PostgreSQL's {@code STORE_BATCH} (see {@link CheckpointWrite}):
 * a generated request gets the greatest stored id plus one, unless that is already 2^63-1
 * (exhausted: nothing changes for it); every document below the resulting id is raised to it, gets
 * this batch's head (a pending one keeps its own, if later) and is pending again; a supplied id
 * equal to a document's resulting id sets its {@code checkpoint_requested_at} to {@code now}, a
 * generated one clears it. Duplicates of older installs are each brought up the same way, and the
 * answer is the maximum across them. A custom checkpoint is planned as a supplied id whose request
 * time is the application's flag's: {@code now} for a request, null for a persistent checkpoint
 * (PostgreSQL's {@code STORE_CUSTOM}).
 *
 * <p>Every change is a compare-and-set, so that concurrent batches never lose an increment without
 * a transaction: an upsert whose filter is the document's {@code _id} with the id and processed
 * state it was read with. If another writer changed either in between, the filter no longer
 * matches, the upsert tries to insert a second document with that {@code _id}, and the server answers
 * a duplicate key error for exactly this operation: the user is then read and planned again. (If
 * compaction deleted the document in between, the upsert recreates it whole from what it sets, as if
 * this batch had come first.) A new user's document is upserted under a fresh {@code _id}: if a
 * concurrent batch created the user first, the unique index on the user key refuses the second.
 */
record UserPlan(CheckpointWrite write, List<BulkOperation> operations, WriteOutcome outcome) {

  /**
   * {@code requestTime}: what a supplied id sets {@code checkpoint_requested_at} to on the documents
   * it creates, raises or meets equal.
   */
  static UserPlan of(CheckpointWrite write, List<CheckpointDocument> documents, JsonObject lsns, JsonObject requestTime) {
    Long stored = null;
    for (CheckpointDocument d : documents) {
      stored = stored == null ? d.checkpoint() : Math.max(stored, d.checkpoint());
    }
    boolean exhausted = write.generated() && stored != null && stored == Long.MAX_VALUE;
    Long generated = write.generated() && !exhausted ? (stored == null ? 0 : stored) + 1 : null;
    Long requested = write.requestedId();
    Long target = requested;
    if (generated != null) {
      target = requested == null ? generated : Long.valueOf(Math.max(generated, requested));
    }

    List<BulkOperation> operations = new ArrayList<>();
    long checkpoint = Long.MIN_VALUE;
    boolean pending = false;
    if (documents.isEmpty()) {
      // A new user: the plan always has a target here (a generated 1, or the supplied id).
      JsonObject filter = CheckpointDocument.key(write.user()).put(ID, new JsonObject().put("$oid", new ObjectId().toHexString()));
      operations.add(upsert(filter, write, target, lsns, null, target.equals(requested) ? requestTime : null, null));
      checkpoint = target;
      pending = true;
    }
    for (CheckpointDocument d : documents) {
      long after = d.checkpoint();
      String processedAfter = d.processedAt();
      if (target != null && d.checkpoint() < target) {
        after = target;
        processedAfter = null;
        JsonObject head = d.processedAt() == null ? later(d.lsns(), lsns) : lsns;
        operations.add(compareAndSet(d, write, target, head, null, target.equals(requested) ? requestTime : null));
      } else if (requested != null && d.checkpoint() == requested) {
        operations.add(compareAndSet(d, write, d.checkpoint(), d.lsns(), d.processedAt(), requestTime));
      }
      checkpoint = Math.max(checkpoint, after);
      pending |= processedAfter == null;
    }
    WriteOutcome outcome = exhausted
        ? new WriteOutcome.Exhausted(checkpoint, pending)
        : new WriteOutcome.Stored(checkpoint, generated == null ? 0 : generated, pending);
    return new UserPlan(write, operations, outcome);
  }

  /**
   * The later of two heads: a pending document raised keeps its own if the batch's is earlier, as
   * PostgreSQL's {@code STORE_BATCH} explains.
   */
  private static JsonObject later(JsonObject held, JsonObject batch) {
    return new JsonObject().put("1", PositionFormat.later(held.getString("1"), batch.getString("1")));
  }

  /**
   * Sets the document whole, on condition that its id and processed state are still as read. A
   * processed document raised to a later id keeps the id it held as its acknowledged one: it stays
   * the answer while the later one is pending.
   */
  private static BulkOperation compareAndSet(CheckpointDocument read, CheckpointWrite write, long checkpoint,
                                             JsonObject lsns, String processedAt, JsonObject requestedAt) {
    JsonObject filter = new JsonObject().put(ID, read.id()).put(CHECKPOINT, read.checkpoint()).put(PROCESSED, read.processedAt());
    Long acknowledged = read.processedAt() != null && checkpoint > read.checkpoint() ? read.checkpoint() : null;
    return upsert(filter, write, checkpoint, lsns, processedAt, requestedAt, acknowledged);
  }

  /**
   * Every field is set, not only those that change, so that an upsert that recreates a document
   * creates it whole. {@code requestedAt} is {@code null} for a generated id; {@code acknowledged}
   * null leaves the document's acknowledged id as it is.
   */
  private static BulkOperation upsert(JsonObject filter, CheckpointWrite write, long checkpoint, JsonObject lsns,
                                      String processedAt, JsonObject requestedAt, Long acknowledged) {
    JsonObject set = CheckpointDocument.key(write.user())
        .put(CHECKPOINT, checkpoint)
        .put(LSNS, lsns)
        .put(PROCESSED, processedAt)
        .put(REQUESTED, requestedAt);
    if (acknowledged != null) {
      set.put(ACKNOWLEDGED, acknowledged);
    }
    return BulkOperation.createUpdate(filter, new JsonObject().put("$set", set), true, false);
  }
}
