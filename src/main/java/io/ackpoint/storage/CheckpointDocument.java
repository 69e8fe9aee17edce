package io.ackpoint.storage;

import io.ackpoint.core.FullUserId;
import io.vertx.core.json.JsonObject;

/**
 * One checkpoint document of MongoDB storage, as read: the same logical row as PostgreSQL's,
 * {@code {_id, user_id, client_id, write_checkpoint, lsns: {"1": head}, processed_at_lsn,
 * checkpoint_requested_at}}. {@code processed_at_lsn} is {@code null} while pending;
 * {@code checkpoint_requested_at} is a date on client-requested documents and {@code null} on
 * generated ones. {@code id} is kept exactly as the client decoded it, so that it matches again.
 */
record CheckpointDocument(Object id, FullUserId user, long checkpoint, JsonObject lsns, String processedAt) {

  static final String COLLECTION = "ackpoint_write_checkpoints";
  static final String ID = "_id";
  static final String USER = "user_id";
  static final String CLIENT = "client_id";
  static final String CHECKPOINT = "write_checkpoint";
  static final String LSNS = "lsns";
  static final String HEAD = "lsns.1";
  static final String PROCESSED = "processed_at_lsn";
  /** Which acknowledgement marked the document processed, so that it answers for exactly those. */
  static final String PROCESSED_BY = "processed_by";
  static final String REQUESTED = "checkpoint_requested_at";
  /**
   * The id acknowledged before a batch raised the document to a later, pending one (one document
   * per user), set by that batch's compare-and-set; custom checkpoints raise documents the same way.
   */
  static final String ACKNOWLEDGED = "acknowledged_checkpoint";

  /** The document as read, or {@code null} when its id is not a whole number ({@link #checkpointOf}). */
  static CheckpointDocument of(JsonObject doc) {
    Long checkpoint = checkpointOf(doc);
    return checkpoint == null ? null
        : new CheckpointDocument(doc.getValue(ID), user(doc), checkpoint, doc.getJsonObject(LSNS, new JsonObject()), doc.getString(PROCESSED));
  }

  /**
   * The document's {@code write_checkpoint}, or {@code null} when it is not a whole number: Ackpoint
   * writes 64-bit integers (a shell may write a whole double), so only a document edited by hand
   * holds anything else, and that fails its own user alone, not the others read with it.
   */
  static Long checkpointOf(JsonObject doc) {
    return wholeNumber(doc.getValue(CHECKPOINT));
  }

  /** An id stored in a document ({@code write_checkpoint}, {@code acknowledged_checkpoint}), or {@code null} when it is none. */
  static Long wholeNumber(Object value) {
    if (value instanceof Integer || value instanceof Long) {
      return ((Number) value).longValue();
    }
    if (value instanceof Double d && d == Math.rint(d) && Math.abs(d) < 0x1p53) {
      return d.longValue();
    }
    return null;
  }

  static FullUserId user(JsonObject doc) {
    return new FullUserId(doc.getString(USER), doc.getString(CLIENT, ""));
  }

  /** The filter of one full user id's documents (the unique index's key on new installs). */
  static JsonObject key(FullUserId user) {
    return new JsonObject().put(USER, user.userId()).put(CLIENT, user.clientId());
  }
}
