package io.ackpoint.storage;

import io.ackpoint.AckpointException;
import io.ackpoint.source.CustomCheckpoint;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlResult;
import io.vertx.sqlclient.Tuple;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Write checkpoints in PostgreSQL. A whole batch is one prepared statement: its rows are locked in
 * user-id order first, so concurrent batches that share users queue up instead of deadlocking.
 */
public final class PgCheckpointStorage implements CheckpointStorage {

  /**
   * Generated ids increment; a supplied id replaces a lower stored id (new head, pending again),
   * refreshes {@code checkpoint_requested_at} on an equal one and leaves a higher one alone. The
   * answer per user is the maximum across its rows (older installs may hold duplicates), and
   * {@code pending} says whether any matched row still waits for replication.
   */
  static final String STORE_BATCH = """
      WITH req AS (
        SELECT r.user_id, r.requested FROM unnest($1::text[], $2::int8[]) AS r(user_id, requested)
      ),
      locked AS MATERIALIZED (
        SELECT count(*) AS n FROM (
          SELECT 1 FROM ackpoint_write_checkpoints c
           WHERE c.user_id = ANY($1::text[])
           ORDER BY c.user_id, c.id
             FOR UPDATE) AS rows_in_order
      ),
      updated AS (
        UPDATE ackpoint_write_checkpoints c
           SET write_checkpoint = coalesce(r.requested, c.write_checkpoint + 1),
               lsns = CASE WHEN r.requested = c.write_checkpoint THEN c.lsns ELSE $3::jsonb END,
               processed_at_lsn = CASE WHEN r.requested = c.write_checkpoint THEN c.processed_at_lsn END,
               checkpoint_requested_at = CASE WHEN r.requested IS NOT NULL THEN now() END
          FROM req r, locked
         WHERE c.user_id = r.user_id
           AND (r.requested IS NULL OR c.write_checkpoint <= r.requested)
        RETURNING c.user_id, c.write_checkpoint, c.processed_at_lsn IS NULL AS pending
      ),
      created AS (
        INSERT INTO ackpoint_write_checkpoints (user_id, write_checkpoint, lsns, checkpoint_requested_at)
        SELECT r.user_id, coalesce(r.requested, 1), $3::jsonb, CASE WHEN r.requested IS NOT NULL THEN now() END
          FROM req r, locked
         WHERE NOT EXISTS (SELECT 1 FROM ackpoint_write_checkpoints c WHERE c.user_id = r.user_id)
         ORDER BY r.user_id
        ON CONFLICT DO NOTHING
        RETURNING user_id, write_checkpoint, true AS pending
      ),
      kept AS (
        SELECT c.user_id, c.write_checkpoint, c.processed_at_lsn IS NULL AS pending
          FROM ackpoint_write_checkpoints c JOIN req r ON c.user_id = r.user_id
         WHERE c.write_checkpoint > r.requested
      )
      SELECT user_id, max(write_checkpoint) AS write_checkpoint, bool_or(pending) AS pending
        FROM (SELECT * FROM updated UNION ALL SELECT * FROM created UNION ALL SELECT * FROM kept) AS outcome
       GROUP BY user_id
      """;

  static final String STORE_CUSTOM = """
      WITH req AS (
        SELECT r.user_id, r.checkpoint, r.request FROM unnest($1::text[], $2::int8[], $3::bool[]) AS r(user_id, checkpoint, request)
      ),
      updated AS (
        UPDATE ackpoint_write_checkpoints c
           SET write_checkpoint = r.checkpoint, lsns = $4::jsonb, processed_at_lsn = NULL,
               checkpoint_requested_at = CASE WHEN r.request THEN now() END
          FROM req r
         WHERE c.user_id = r.user_id AND c.write_checkpoint < r.checkpoint
        RETURNING c.user_id
      )
      INSERT INTO ackpoint_write_checkpoints (user_id, write_checkpoint, lsns, checkpoint_requested_at)
      SELECT r.user_id, r.checkpoint, $4::jsonb, CASE WHEN r.request THEN now() END
        FROM req r
       WHERE NOT EXISTS (SELECT 1 FROM ackpoint_write_checkpoints c WHERE c.user_id = r.user_id)
      ON CONFLICT DO NOTHING
      """;

  // COLLATE "C": heads compare as plain bytes, which is their replication order; a linguistic
  // collation may ignore the '/' or order digits and letters differently. The rows are locked in the
  // same order as a batch locks them (user id, then row id), so the two never deadlock; the lock
  // re-checks the conditions, so a row raised to a later head meanwhile stays pending.
  static final String MARK_PROCESSED = """
      WITH due AS (
        SELECT id FROM ackpoint_write_checkpoints
         WHERE processed_at_lsn IS NULL AND (lsns->>'1') COLLATE "C" <= $1 COLLATE "C"
         ORDER BY user_id, id
           FOR UPDATE
      )
      UPDATE ackpoint_write_checkpoints c SET processed_at_lsn = $1
        FROM due
       WHERE c.id = due.id
      RETURNING c.user_id, c.write_checkpoint
      """;

  static final String LATEST_ACKNOWLEDGED = """
      SELECT max(write_checkpoint) FROM ackpoint_write_checkpoints
       WHERE user_id = $1 AND processed_at_lsn IS NOT NULL
      """;

  // SKIP LOCKED leaves rows that a batch is writing right now to the next round; FOR UPDATE re-checks
  // the conditions on the newest row version, so a row raised (pending again) meanwhile is spared.
  static final String DELETE_EXPIRED = """
      WITH doomed AS (
        SELECT id FROM ackpoint_write_checkpoints
         WHERE checkpoint_requested_at < $1 AND processed_at_lsn IS NOT NULL
         ORDER BY checkpoint_requested_at
         LIMIT $2
           FOR UPDATE SKIP LOCKED
      )
      DELETE FROM ackpoint_write_checkpoints c USING doomed WHERE c.id = doomed.id
      """;

  /**
   * A user can be missing from the answer only when a concurrent batch created or raised its row
   * after this statement's snapshot was taken; the next attempt sees that row. Each attempt only
   * carries the users still missing, so this ends quickly even under contention.
   */
  private static final int MAX_ATTEMPTS = 4;

  private final Pool pool;

  public PgCheckpointStorage(Pool pool) {
    this.pool = pool;
  }

  @Override
  public Future<StoredBatch> store(String head, List<CheckpointWrite> writes) {
    JsonObject lsns = new JsonObject().put("1", head);
    return attempt(lsns, writes, new HashMap<>(), false, 1)
        .recover(e -> Future.failedFuture(e instanceof AckpointException ? e : AckpointException.storageUnavailable(e)));
  }

  private Future<StoredBatch> attempt(JsonObject lsns, List<CheckpointWrite> writes, Map<String, Long> answered,
                                      boolean pending, int attempt) {
    String[] users = new String[writes.size()];
    Long[] requested = new Long[writes.size()];
    for (int i = 0; i < users.length; i++) {
      users[i] = writes.get(i).userId();
      requested[i] = writes.get(i).requestedId();
    }
    return pool.preparedQuery(STORE_BATCH).execute(Tuple.of(users, requested, lsns)).compose(rows -> {
      boolean anyPending = pending;
      for (Row row : rows) {
        answered.put(row.getString(0), row.getLong(1));
        anyPending |= row.getBoolean(2);
      }
      List<CheckpointWrite> missing = new ArrayList<>();
      for (CheckpointWrite w : writes) {
        if (!answered.containsKey(w.userId())) {
          missing.add(w);
        }
      }
      if (missing.isEmpty()) {
        return Future.succeededFuture(new StoredBatch(answered, anyPending));
      }
      if (attempt >= MAX_ATTEMPTS) {
        return Future.failedFuture(new AckpointException(503, "ACK_STORAGE_CONTENTION",
            "checkpoint storage is too contended, retry"));
      }
      return attempt(lsns, missing, answered, anyPending, attempt + 1);
    });
  }

  @Override
  public Future<Void> storeCustom(String position, List<CustomCheckpoint> checkpoints) {
    // One row per user: the greatest id of the transaction wins, with its request flag.
    Map<String, CustomCheckpoint> latest = new LinkedHashMap<>();
    for (CustomCheckpoint c : checkpoints) {
      latest.merge(c.userId(), c, (a, b) -> b.checkpoint() > a.checkpoint() ? b : a);
    }
    int n = latest.size();
    String[] users = new String[n];
    Long[] ids = new Long[n];
    Boolean[] requests = new Boolean[n];
    int i = 0;
    for (CustomCheckpoint c : latest.values()) {
      users[i] = c.userId();
      ids[i] = c.checkpoint();
      requests[i++] = c.request();
    }
    return pool.preparedQuery(STORE_CUSTOM).execute(Tuple.of(users, ids, requests, new JsonObject().put("1", position)))
        .<Void>mapEmpty()
        .recover(e -> Future.failedFuture(AckpointException.storageUnavailable(e)));
  }

  @Override
  public Future<List<Reached>> markProcessed(String position) {
    return pool.preparedQuery(MARK_PROCESSED).execute(Tuple.of(position)).<List<Reached>>map(rows -> {
      List<Reached> reached = new ArrayList<>(rows.rowCount());
      for (Row row : rows) {
        reached.add(new Reached(row.getString(0), row.getLong(1)));
      }
      return reached;
    }).recover(e -> Future.failedFuture(AckpointException.storageUnavailable(e)));
  }

  @Override
  public Future<Long> latestAcknowledged(String userId) {
    return pool.preparedQuery(LATEST_ACKNOWLEDGED).execute(Tuple.of(userId))
        .<Long>map(rows -> rows.iterator().next().getLong(0))
        .recover(e -> Future.failedFuture(AckpointException.storageUnavailable(e)));
  }

  @Override
  public Future<Integer> deleteExpiredRequests(Instant requestedBefore, int limit) {
    return pool.preparedQuery(DELETE_EXPIRED)
        .execute(Tuple.of(OffsetDateTime.ofInstant(requestedBefore, ZoneOffset.UTC), limit))
        .<Integer>map(SqlResult::rowCount)
        .recover(e -> Future.failedFuture(AckpointException.storageUnavailable(e)));
  }

  @Override
  public Future<Long> count() {
    return pool.preparedQuery("SELECT count(*) FROM ackpoint_write_checkpoints").execute()
        .<Long>map(rows -> rows.iterator().next().getLong(0))
        .recover(e -> Future.failedFuture(AckpointException.storageUnavailable(e)));
  }

  @Override
  public Future<Void> ping() {
    return pool.query("SELECT 1").execute().mapEmpty();
  }

  @Override
  public Future<Void> close() {
    return pool.close();
  }
}
