package io.ackpoint.storage;

/**
 * The SQL of {@link PgCheckpointStorage}, one statement per operation, each a constant number of
 * round trips whatever the number of users it carries.
 */
final class PgStatements {

  private PgStatements() {
  }

  /** {@code pg_current_wal_lsn()} padded to {@code %08X/%08X}, as the source pads it. */
  private static final String CURRENT_HEAD = padded("SELECT pg_current_wal_lsn()::text");

  /**
   * The one position (text) {@code positionQuery} answers, if any, padded to {@code %08X/%08X} as the
   * source pads it. The query is a subquery of its own, never pulled up, so that a volatile
   * function in it runs once.
   */
  private static String padded(String positionQuery) {
    return "SELECT lpad(split_part(l, '/', 1), 8, '0') || '/' || lpad(split_part(l, '/', 2), 8, '0') FROM ("
        + positionQuery + ") w(l)";
  }

  /** The batch statement of installs without the unique key, at a head the caller read ({@code $5}); see {@link #storeBatch}. */
  static final String STORE_BATCH = storeBatch("SELECT $5::text", null);

  /**
   * The batch statement on a table with its unique key, at a head the caller read: {@link #STORE_BATCH}'s
   * outcome and answer for a batch whose writes are each generated or supplied, not both ({@code $1}
   * users, {@code $2} client ids, {@code $3} supplied ids, null for a generated one, {@code $4} the
   * head). Each row is found once, by the insert's unique check, instead of once to lock it and again
   * to update it through a chain of planned steps (see {@link #upsertBatch}).
   */
  static final String UPSERT_BATCH = upsertBatch("SELECT $4::text", null);

  /**
   * {@link #STORE_BATCH} when the source is this database: the statement reads the head itself
   * ({@code pg_current_wal_lsn()}, padded as the source pads it) and writes the source's marker in
   * its own transaction ({@code markerCall}, see {@link #marker}): head, rows and marker in one round
   * trip and one commit.
   */
  static String storeBatchAtCurrentHead(String markerCall) {
    return storeBatch(CURRENT_HEAD, markerCall);
  }

  /** {@link #UPSERT_BATCH} when the source is this database, as {@link #storeBatchAtCurrentHead}. */
  static String upsertBatchAtCurrentHead(String markerCall) {
    return upsertBatch(CURRENT_HEAD, markerCall);
  }

  /**
   * The answer's last column: the position of the marker that {@code markerCall} (an SQL call that
   * writes one into the statement's transaction and answers its position) wrote if the batch
   * {@code leftPending} (a condition on the statement's CTEs) or the pending queue lost its proof of
   * completeness (so that the acknowledgement that follows rebuilds it); null if it wrote none, and
   * always null without a call. Its CTE, or "" without one.
   *
   * <p>Why a marker in the batch's own transaction is enough: it is decoded at that transaction's
   * commit, never before the batch's rows are committed (visible a moment later, which the
   * acknowledgement engine waits out, see {@link HeadStoringWriter}), and the follower observes it at the
   * commit's position, after every head the batch stored (each read at the statement's start,
   * before the marker was written). A pending row of the answer that holds another batch's head has that
   * batch's marker, committed with that batch. A marker of a statement that fails is rolled back
   * with its rows.
   */
  private static String marker(String markerCall, String leftPending) {
    return markerCall == null ? "" : """
      ,
      marker AS MATERIALIZED (
        %s
      )""".formatted(padded("SELECT (" + markerCall + ")::text WHERE (SELECT head FROM head) IS NOT NULL AND ("
        + leftPending + " OR NOT " + QUEUE_COMPLETE + ")"));
  }

  private static String markerColumn(String markerCall) {
    return markerCall == null ? "NULL::text" : "(SELECT * FROM marker)";
  }

  /**
   * Answers whether the checkpoints table has its unique key on the full user id (installs that held
   * duplicate rows per user keep a plain index, see {@link PgMigrations}; they take {@link #STORE_BATCH}).
   */
  static final String HAS_UNIQUE_KEY = "SELECT to_regclass('ackpoint_write_checkpoints_user_client_key') IS NOT NULL";

  /**
   * On a table without its unique key nothing stops two transactions from each creating the row of a
   * user neither sees yet (an insert's {@code ON CONFLICT} has no key to meet): both commit, the user
   * has two rows of one id at two heads, and replication passing the lower head acknowledged the
   * other (a review of the storage's concurrency showed it with two sessions). So a transaction that
   * writes users there first takes a lock per full user id ({@code $1}, {@code $2}), in one order so
   * that two of them queue up instead of deadlocking, in a statement of its own: the statements
   * after it take their snapshots once the locks are held, when any transaction that held them
   * before has committed its rows (under READ COMMITTED, which Ackpoint's sessions ask for at
   * start-up, see PgPools). Transaction-level advisory locks, in a space of Ackpoint's own (two int
   * keys; the migrations take a one-key lock), 256 of them at most, each shared by the users whose
   * hashes meet there, who then queue up: one lock per user filled the server's lock table at some
   * 12,000 users in a transaction ("out of shared memory", for the application's sessions too).
   */
  static final String LOCK_USERS = """
      SELECT count(pg_advisory_xact_lock(hashtext('ackpoint.write_checkpoints'), k)::text) FROM (
        SELECT DISTINCT hashtext(jsonb_build_array(r.user_id, r.client_id)::text) & 255 AS k
          FROM unnest($1::text[], $2::text[]) AS r(user_id, client_id)
         ORDER BY k) keys
      """;

  /**
   * The batch statement of installs without the unique key (they held duplicate rows per user when
   * it came, see {@link PgMigrations}); one statement per batch, at the head {@code headQuery} answers; the answer's rows are one per
   * user (its greatest id, whether a row of it is pending, and the latest head of its pending rows),
   * then the head. The rows of the batch's users are
   * locked first, in key order, so concurrent batches sharing users queue up instead of
   * deadlocking; the lock also hands this statement each row's newest committed id, which the plan
   * builds on.
   *
   * <p>Per user (see {@link CheckpointWrite}): a generated request gets {@code stored + 1}, unless
   * the stored id is already 2^63-1 (exhausted: nothing changes for it); the row then takes the
   * greater of that and the supplied id. A row whose id grows gets this batch's head and is pending
   * again; a supplied id equal to the resulting id refreshes {@code checkpoint_requested_at}, a
   * generated one clears it. A pending row keeps its head if that is later than the batch's: batches
   * that overlap (cluster nodes, a timed-out batch whose statement still runs) can commit out of the
   * order they read their heads in, and acknowledging the later id acknowledges the pending lower
   * one with it. A processed row's head was passed; it takes the batch's. Rows of older installs
   * that hold duplicates per user are each brought up the same way, and the answer is the maximum
   * across them. A user whose row was created by a
   * concurrent batch after this statement's snapshot is missing from the answer and retried, where
   * the unique key meets the insert; where there is none, {@link #LOCK_USERS} keeps such a batch
   * from running meanwhile.
   */
  private static String storeBatch(String headQuery, String markerCall) {
    return """
      WITH head AS MATERIALIZED (
        SELECT h AS head, jsonb_build_object('1', h) AS lsns FROM (%s) x(h)
      ),
      req AS (
        SELECT r.user_id, r.client_id, r.requested, r.generated
          FROM unnest($1::text[], $2::text[], $3::int8[], $4::bool[]) AS r(user_id, client_id, requested, generated)
      ),
      locked AS MATERIALIZED (
        SELECT c.id, c.user_id, c.client_id, c.write_checkpoint, c.processed_at_lsn IS NULL AS pending, c.lsns->>'1' AS head
          FROM ackpoint_write_checkpoints c
         WHERE (c.user_id, c.client_id) IN (SELECT user_id, client_id FROM req)
         ORDER BY c.user_id, c.client_id, c.id
           FOR UPDATE
      ),
      plan AS MATERIALIZED (
        SELECT r.user_id, r.client_id, r.requested, s.stored,
               r.generated AND s.stored IS NOT DISTINCT FROM 9223372036854775807 AS exhausted,
               CASE WHEN r.generated AND s.stored IS DISTINCT FROM 9223372036854775807
                    THEN coalesce(s.stored, 0) + 1 END AS generated
          FROM req r
          LEFT JOIN (SELECT user_id, client_id, max(write_checkpoint) AS stored FROM locked GROUP BY user_id, client_id) s
            USING (user_id, client_id)
      ),
      target AS (
        SELECT p.*, greatest(p.generated, p.requested) AS target FROM plan p
      ),
      updated AS (
        UPDATE ackpoint_write_checkpoints c
           SET write_checkpoint = greatest(c.write_checkpoint, t.target),
               lsns = CASE WHEN c.write_checkpoint >= t.target THEN c.lsns
                           WHEN c.processed_at_lsn IS NOT NULL THEN (SELECT lsns FROM head)
                           ELSE jsonb_build_object('1',
                                  greatest(c.lsns->>'1' COLLATE "C", (SELECT head FROM head) COLLATE "C")) END,
               processed_at_lsn = CASE WHEN c.write_checkpoint < t.target THEN NULL ELSE c.processed_at_lsn END,
               acknowledged_checkpoint = CASE WHEN c.write_checkpoint < t.target AND c.processed_at_lsn IS NOT NULL
                                              THEN c.write_checkpoint ELSE c.acknowledged_checkpoint END,
               checkpoint_requested_at = CASE
                 WHEN greatest(c.write_checkpoint, t.target) = t.requested THEN now()
                 WHEN t.generated IS NOT NULL THEN NULL
                 ELSE c.checkpoint_requested_at END
          FROM target t
         WHERE c.user_id = t.user_id AND c.client_id = t.client_id AND t.stored IS NOT NULL
           AND (c.write_checkpoint < t.target OR c.write_checkpoint = t.requested)
        RETURNING c.id, c.write_checkpoint, c.processed_at_lsn IS NULL AS pending, c.lsns->>'1' AS head
      ),
      created AS (
        INSERT INTO ackpoint_write_checkpoints (user_id, client_id, write_checkpoint, lsns, checkpoint_requested_at)
        SELECT t.user_id, t.client_id, t.target, (SELECT lsns FROM head), CASE WHEN t.target = t.requested THEN now() END
          FROM target t
         WHERE t.stored IS NULL
         ORDER BY t.user_id, t.client_id
        ON CONFLICT DO NOTHING
        RETURNING id, user_id, client_id, write_checkpoint, true AS pending
      ),
      queued AS (
        INSERT INTO ackpoint_pending (id, head, checkpoint)
        SELECT u.id, u.head, u.write_checkpoint FROM updated u JOIN locked l ON l.id = u.id
         WHERE u.write_checkpoint > l.write_checkpoint
        UNION ALL
        SELECT id, (SELECT head FROM head), write_checkpoint FROM created
      ),
      outcome AS (
        SELECT l.user_id, l.client_id, coalesce(u.write_checkpoint, l.write_checkpoint) AS write_checkpoint,
               coalesce(u.pending, l.pending) AS pending, coalesce(u.head, l.head) AS head
          FROM locked l LEFT JOIN updated u ON u.id = l.id
        UNION ALL
        SELECT user_id, client_id, write_checkpoint, pending, (SELECT head FROM head) FROM created
      ),
      answer AS (
        SELECT t.user_id, t.client_id, max(o.write_checkpoint) AS write_checkpoint, bool_or(o.pending) AS pending,
               t.generated, t.exhausted, max(o.head COLLATE "C") FILTER (WHERE o.pending) AS pending_head
          FROM target t JOIN outcome o ON o.user_id = t.user_id AND o.client_id = t.client_id
         GROUP BY t.user_id, t.client_id, t.generated, t.exhausted
      )%s
      SELECT a.*, (SELECT head FROM head), %s FROM answer a
      """.formatted(headQuery, marker(markerCall, "EXISTS (SELECT 1 FROM answer WHERE pending)"), markerColumn(markerCall));
  }

  /**
   * The rows are locked in one key order, existing and new alike, so concurrent batches sharing
   * users queue up instead of deadlocking: the insert takes its rows in that order and meets each
   * existing row in its unique check, where {@code ON CONFLICT} locks the row's newest committed
   * version and decides on it (as {@link #STORE_BATCH} decides on the version it locked). A row
   * that a concurrent batch created is met and updated too, not missed.
   *
   * <p>The update has only the table's columns of the proposed row ({@code excluded}) to go by, so
   * the proposed row carries the write: a generated write proposes id 1 and no request time (what a
   * new row of it gets), a supplied one its id and the time (likewise). Which of the two a write is,
   * is thus told by the request time alone, which is why a write that is both is stored in two
   * turns ({@link SuppliedAfterGenerated}).
   *
   * <p>A row that the update leaves as it is (a generated id exhausted, a supplied id below the
   * stored one) is still locked by it, and is read back with its lock for the answer once every row
   * was met: its write is found by taking the rows written from the writes, which reads all of
   * them first, so this read never locks a row before the insert's turn (a row written answers its
   * write: a supplied one holds the supplied id, a generated one has no request time). When every
   * write was answered, a one-time filter skips the read. If this statement's snapshot cannot see
   * such a row (a concurrent batch created it), its user is missing from the answer and retried, as
   * in {@link #STORE_BATCH}.
   *
   * <p>A supplied id equal to the stored one refreshes its row. If the row is pending, it is queued
   * again at its head with its id, a copy of the entry its raise queued, which changes nothing: an
   * acknowledgement decides on the row it locks, so of two such entries taken in one statement or
   * in two, the second finds the row already processed (or its id already acknowledged) and leaves
   * it as it is; at most it keeps a marker wanted one acknowledgement longer. A row of an older
   * install that never had a head is not queued, as the queue's rebuild leaves it.
   *
   * <p>Not to be run beside {@link #STORE_BATCH} on one table: that one locks the existing rows
   * before it inserts the new ones, so the two could each wait for a row the other holds. Which of
   * them storage takes is a property of the table (its unique key), the same for every batch and
   * every node of this version. Custom checkpoints take {@link #UPSERT_CUSTOM} on such a table,
   * which meets its rows in the same key order.
   */
  private static String upsertBatch(String headQuery, String markerCall) {
    return """
      WITH head AS MATERIALIZED (
        SELECT h AS head, jsonb_build_object('1', h) AS lsns FROM (%s) x(h)
      ),
      req AS (
        SELECT r.user_id, r.client_id, r.requested
          FROM unnest($1::text[], $2::text[], $3::int8[]) AS r(user_id, client_id, requested)
      ),
      written AS (
        INSERT INTO ackpoint_write_checkpoints AS c (user_id, client_id, write_checkpoint, lsns, checkpoint_requested_at)
        SELECT r.user_id, r.client_id, coalesce(r.requested, 1), (SELECT lsns FROM head),
               CASE WHEN r.requested IS NOT NULL THEN now() END
          FROM req r
         ORDER BY r.user_id, r.client_id
        ON CONFLICT (user_id, client_id) DO UPDATE
           SET write_checkpoint = CASE WHEN excluded.checkpoint_requested_at IS NULL THEN c.write_checkpoint + 1
                                       ELSE excluded.write_checkpoint END,
               lsns = CASE WHEN c.write_checkpoint = excluded.write_checkpoint AND excluded.checkpoint_requested_at IS NOT NULL
                             THEN c.lsns
                           WHEN c.processed_at_lsn IS NOT NULL THEN excluded.lsns
                           ELSE jsonb_build_object('1',
                                  greatest(c.lsns->>'1' COLLATE "C", excluded.lsns->>'1' COLLATE "C")) END,
               processed_at_lsn = CASE WHEN c.write_checkpoint = excluded.write_checkpoint AND excluded.checkpoint_requested_at IS NOT NULL
                                       THEN c.processed_at_lsn END,
               acknowledged_checkpoint = CASE WHEN c.processed_at_lsn IS NOT NULL
                                               AND (c.write_checkpoint < excluded.write_checkpoint OR excluded.checkpoint_requested_at IS NULL)
                                              THEN c.write_checkpoint ELSE c.acknowledged_checkpoint END,
               checkpoint_requested_at = excluded.checkpoint_requested_at
         WHERE CASE WHEN excluded.checkpoint_requested_at IS NULL THEN c.write_checkpoint < 9223372036854775807
                    ELSE c.write_checkpoint <= excluded.write_checkpoint END
        RETURNING c.id, c.user_id, c.client_id, c.write_checkpoint, c.processed_at_lsn IS NULL AS pending,
                  c.lsns->>'1' AS head, c.checkpoint_requested_at IS NULL AS generated
      ),
      counted AS MATERIALIZED (
        SELECT count(*) AS n FROM written
      ),
      missing AS MATERIALIZED (
        SELECT m.user_id, m.client_id, m.requested
          FROM (SELECT user_id, client_id, requested FROM req
                EXCEPT ALL
                SELECT user_id, client_id, CASE WHEN NOT generated THEN write_checkpoint END FROM written) m
         WHERE (SELECT n FROM counted) < (SELECT count(*) FROM req)
      ),
      left_as_is AS (
        SELECT c.user_id, c.client_id, c.write_checkpoint, c.processed_at_lsn IS NULL AS pending, c.lsns->>'1' AS head,
               m.requested IS NULL AS exhausted
          FROM ackpoint_write_checkpoints c JOIN missing m ON m.user_id = c.user_id AND m.client_id = c.client_id
         ORDER BY c.user_id, c.client_id
           FOR UPDATE OF c
      ),
      queued AS (
        INSERT INTO ackpoint_pending (id, head, checkpoint)
        SELECT id, head, write_checkpoint FROM written WHERE pending AND head IS NOT NULL
      )%s
      SELECT user_id, client_id, write_checkpoint, pending, CASE WHEN generated THEN write_checkpoint END, false,
             CASE WHEN pending THEN head END, (SELECT head FROM head), %s
        FROM written
      UNION ALL
      SELECT user_id, client_id, write_checkpoint, pending, NULL, exhausted, CASE WHEN pending THEN head END, (SELECT head FROM head), %s
        FROM left_as_is
      """.formatted(headQuery,
        marker(markerCall, "(EXISTS (SELECT 1 FROM written WHERE pending) OR EXISTS (SELECT 1 FROM left_as_is WHERE pending))"),
        markerColumn(markerCall), markerColumn(markerCall));
  }

  /**
   * Custom checkpoints of one transaction, the greatest per user: a greater id raises the row (pending
   * again at the transaction's position), an equal one only sets {@code checkpoint_requested_at} by
   * its request flag (an application that repeats a request keeps it from compaction, as the
   * checkpoint-request route does; one that repeats it without the flag keeps it for good), a
   * lower one changes nothing. On tables without the unique key; with it, {@link #UPSERT_CUSTOM}.
   */
  static final String STORE_CUSTOM = """
      WITH req AS (
        SELECT r.user_id, r.client_id, r.checkpoint, r.request
          FROM unnest($1::text[], $2::text[], $3::int8[], $4::bool[]) AS r(user_id, client_id, checkpoint, request)
      ),
      updated AS (
        UPDATE ackpoint_write_checkpoints c
           SET write_checkpoint = r.checkpoint, lsns = $5::jsonb, processed_at_lsn = NULL,
               acknowledged_checkpoint = CASE WHEN c.processed_at_lsn IS NOT NULL THEN c.write_checkpoint ELSE c.acknowledged_checkpoint END,
               checkpoint_requested_at = CASE WHEN r.request THEN now() END
          FROM req r
         WHERE c.user_id = r.user_id AND c.client_id = r.client_id AND c.write_checkpoint < r.checkpoint
        RETURNING c.id, c.write_checkpoint
      ),
      refreshed AS (
        UPDATE ackpoint_write_checkpoints c SET checkpoint_requested_at = CASE WHEN r.request THEN now() END
          FROM req r
         WHERE c.user_id = r.user_id AND c.client_id = r.client_id AND c.write_checkpoint = r.checkpoint
      ),
      created AS (
        INSERT INTO ackpoint_write_checkpoints (user_id, client_id, write_checkpoint, lsns, checkpoint_requested_at)
        SELECT r.user_id, r.client_id, r.checkpoint, $5::jsonb, CASE WHEN r.request THEN now() END
          FROM req r
         WHERE NOT EXISTS (SELECT 1 FROM ackpoint_write_checkpoints c WHERE c.user_id = r.user_id AND c.client_id = r.client_id)
        ON CONFLICT DO NOTHING
        RETURNING id, write_checkpoint
      )
      INSERT INTO ackpoint_pending (id, head, checkpoint)
      SELECT u.id, $5::jsonb->>'1', u.write_checkpoint FROM updated u
      UNION ALL
      SELECT c.id, $5::jsonb->>'1', c.write_checkpoint FROM created c
      """;

  /**
   * {@link #STORE_CUSTOM} on a table with its unique key (the same parameters): its rows met in key
   * order, new and existing alike, by the insert's unique check, as {@link #upsertBatch} meets
   * them, so that a transaction's custom checkpoints and a batch that shares their users queue up
   * instead of deadlocking ({@link #STORE_CUSTOM} updates, then inserts, each in no set order). The
   * proposed row is the write, and the update decides on the row's newest committed version: a
   * greater id raises it (pending at the transaction's position), an equal one sets only its request
   * time, a lower one leaves it as it is. Every pending row written is queued at its head: a raised
   * or new one at the position, a refreshed pending one again at its own head, a copy of its entry
   * that changes nothing (see {@link #upsertBatch}).
   */
  static final String UPSERT_CUSTOM = """
      WITH written AS (
        INSERT INTO ackpoint_write_checkpoints AS c (user_id, client_id, write_checkpoint, lsns, checkpoint_requested_at)
        SELECT r.user_id, r.client_id, r.checkpoint, $5::jsonb, CASE WHEN r.request THEN now() END
          FROM unnest($1::text[], $2::text[], $3::int8[], $4::bool[]) AS r(user_id, client_id, checkpoint, request)
         ORDER BY r.user_id, r.client_id
        ON CONFLICT (user_id, client_id) DO UPDATE
           SET write_checkpoint = excluded.write_checkpoint,
               lsns = CASE WHEN c.write_checkpoint < excluded.write_checkpoint THEN excluded.lsns ELSE c.lsns END,
               processed_at_lsn = CASE WHEN c.write_checkpoint < excluded.write_checkpoint THEN NULL ELSE c.processed_at_lsn END,
               acknowledged_checkpoint = CASE WHEN c.write_checkpoint < excluded.write_checkpoint AND c.processed_at_lsn IS NOT NULL
                                              THEN c.write_checkpoint ELSE c.acknowledged_checkpoint END,
               checkpoint_requested_at = excluded.checkpoint_requested_at
         WHERE c.write_checkpoint <= excluded.write_checkpoint
        RETURNING c.id, c.write_checkpoint, c.processed_at_lsn IS NULL AS pending, c.lsns->>'1' AS head
      )
      INSERT INTO ackpoint_pending (id, head, checkpoint)
      SELECT id, head, write_checkpoint FROM written WHERE pending AND head IS NOT NULL
      """;

  /*
   * Pending rows are queued in ackpoint_pending, (row id, head, id of the checkpoint), written in the same statement as
   * the row, so no index of the checkpoints table covers a column that a write or an
   * acknowledgement changes and both updates stay HOT. An entry can outlive the row's pending state
   * (the row was raised to a later head, which queued another entry, or deleted): an
   * acknowledgement re-checks the row and drops every entry at or before its position.
   *
   * The queue is UNLOGGED: a crash of the server empties it, while the rows it indexes are durable.
   * Entries with head '' are not checkpoints: (0, '') is the proof that the queue is complete, and
   * (negative id, '') says that a rebuild began (PendingQueueRebuild). A crash takes both away with
   * the rest. An acknowledgement that finds no proof changes nothing and answers one row of nulls;
   * the caller rebuilds the queue and acknowledges again.
   */

  /** Whether the pending queue is proven complete (no crash emptied it since its last rebuild). */
  private static final String QUEUE_COMPLETE = "EXISTS (SELECT 1 FROM ackpoint_pending WHERE head = '' AND id = 0)";

  /**
   * The rows of one window of a walk of the checkpoints table in id order: at most {@code limit}
   * rows after id {@code after}. The walks (compaction, the queue's rebuild) read every row in short
   * statements, with no index but the primary key.
   */
  private static String window(String columns, String after, String limit) {
    return "SELECT " + columns + " FROM ackpoint_write_checkpoints WHERE id > " + after + " ORDER BY id LIMIT " + limit;
  }

  /** Where the walk goes on from the window {@code scanned} of {@code limit} rows: its last id, null once past the end. */
  private static String nextWindow(String limit) {
    return "CASE WHEN count(*) = " + limit + " THEN max(id) END";
  }

  /** Says that the rebuild {@code $1} (a negative id of its own) began. */
  static final String REBUILD_BEGIN = "INSERT INTO ackpoint_pending (id, head) VALUES ($1, '')";

  /** A rebuild that failed takes its begin entry back (best effort: the entry does no harm). */
  static final String REBUILD_ABANDON = "DELETE FROM ackpoint_pending WHERE head = '' AND id = $1";

  /**
   * Queues the pending rows of the window of at most {@code $2} rows after id {@code $1}; answers the
   * window's last id, or null once the walk has passed the end. Bounded, so a big table is rebuilt
   * in short statements. Rows without a head (no key {@code "1"}, or a JSON null there: older or
   * hand-edited rows) were never acknowledged and are not queued; a null would fail every rebuild,
   * and with it every acknowledgement.
   */
  static final String REBUILD_WINDOW = """
      WITH scanned AS MATERIALIZED (
        %s
      ),
      queued AS (
        INSERT INTO ackpoint_pending (id, head, checkpoint)
        SELECT id, lsns->>'1', write_checkpoint FROM scanned WHERE processed_at_lsn IS NULL AND lsns->>'1' IS NOT NULL
      )
      SELECT %s FROM scanned
      """.formatted(window("id, lsns, processed_at_lsn, write_checkpoint", "$1", "$2"), nextWindow("$2"));

  /**
   * Ends the rebuild {@code $1}: if its begin entry is still there, no crash emptied the queue since
   * it began, so every row pending then was queued by a window and every row made pending since by
   * its own statement: the proof is written. Answers whether the queue is complete (this rebuild's
   * proof, or another's written since a crash): if not, the rebuild starts over.
   */
  static final String REBUILD_END = """
      WITH began AS (
        DELETE FROM ackpoint_pending WHERE head = '' AND id = $1 RETURNING id
      ),
      proof AS (
        INSERT INTO ackpoint_pending (id, head)
        SELECT 0, '' WHERE EXISTS (SELECT 1 FROM began) AND NOT %1$s
      )
      SELECT EXISTS (SELECT 1 FROM began) OR %1$s
      """.formatted(QUEUE_COMPLETE);

  // COLLATE "C": heads compare as plain bytes, which is their replication order; a linguistic
  // collation may ignore the '/' or order digits and letters differently. The rows are locked in
  // the same order as a batch locks them (user key, then row id), so the two never deadlock; the
  // lock re-checks the conditions on the newest row version, and every decision is taken from the
  // locked version (the UPDATE's own conditions would be tested on the statement's snapshot, which
  // misses a raise committed while the statement waited for the lock). No two of its CTEs are
  // joined to each other: the generic plan, which a prepared statement uses from its sixth run,
  // knows no CTE's size and joined them in a nested loop (10,000 rows: 5 s instead of 0.1 s). Nor
  // does the scan of the checkpoints table filter on processed_at_lsn IS NULL: the statistics of a
  // table in use say that almost no row is pending, so the generic plan on a small table scanned
  // the whole table for the pending rows and then the whole CTE of due entries once per row (200
  // rows due: 40,000 comparisons, most of the statement's time; about a tenth of the server's CPU
  // per request). Each entry's row is looked up by its id (the primary key; PgCheckpointStorageTest
  // checks the generic plan), and whether the row is still pending is part of the decision, taken
  // on the locked version like the rest: a row processed in that version (its entry outlived its
  // pending state) is locked and left as it is, and one raised while the statement waited for its
  // lock is decided as any pending row, so it may be acknowledged by this statement. A row whose
  // head the position passed is marked processed. A row raised to a later head since an entry was
  // queued stays pending, and the entry's own id, whose head the position did pass, becomes the
  // row's acknowledged id: every id queued at or before a position is recorded once that position
  // is applied, however often the row was raised meanwhile (the engine tells streams of such ids
  // before this statement commits, see EarlyReleases). Duplicate rows of one user (older installs)
  // are answered once, with their greatest acknowledged id, so that nobody is told of a lower id
  // after a higher one. At most $2 queue entries per statement, the oldest heads first: a position
  // after a bulk transaction or a long outage is due for any number of rows, more than one
  // statement marks within statement_timeout. The last row answers how many entries were taken
  // (null when the queue lost its proof of completeness), after this database's head; the caller
  // repeats while a statement takes its full count. $3 says that this database is the source: a
  // position beyond its head (every position replication passed was written here first) then means
  // that the source went back, restored or replaced by a server that was behind, and the statement
  // marks nothing, for the rows stored since are the new server's, their heads before the position
  // though replication passed none of them; the count answered is -1.
  static final String MARK_PROCESSED = """
      WITH queue AS MATERIALIZED (
        SELECT %s AS complete
      ),
      here AS MATERIALIZED (
        SELECT h AS head, coalesce(h < $1 COLLATE "C", false) AS behind
          FROM (SELECT CASE WHEN $3::bool THEN (%s) END) x(h)
      ),
      dequeued AS (
        DELETE FROM ackpoint_pending
         WHERE ctid = ANY (ARRAY(
           SELECT ctid FROM ackpoint_pending
            WHERE head > '' AND head <= $1 AND (SELECT complete FROM queue) AND NOT (SELECT behind FROM here)
            ORDER BY head, id LIMIT $2))
        RETURNING id, checkpoint
      ),
      entries AS MATERIALIZED (
        SELECT id, max(checkpoint) AS checkpoint FROM dequeued GROUP BY id
      ),
      due AS (
        SELECT c.id, (c.lsns->>'1') COLLATE "C" <= $1 COLLATE "C" AS passed, e.checkpoint,
               c.processed_at_lsn IS NULL AND ((c.lsns->>'1') COLLATE "C" <= $1 COLLATE "C"
                 OR (e.checkpoint < c.write_checkpoint AND e.checkpoint > coalesce(c.acknowledged_checkpoint, 0))) AS applies
          FROM ackpoint_write_checkpoints c JOIN entries e ON e.id = c.id
         ORDER BY c.user_id, c.client_id, c.id
           FOR UPDATE OF c
      ),
      marked AS (
        UPDATE ackpoint_write_checkpoints c
           SET processed_at_lsn = CASE WHEN d.passed THEN $1 END,
               acknowledged_checkpoint = CASE WHEN d.passed THEN c.acknowledged_checkpoint
                                              ELSE greatest(c.acknowledged_checkpoint, d.checkpoint) END
          FROM due d
         WHERE c.id = d.id AND d.applies
        RETURNING c.user_id, c.client_id,
                  CASE WHEN c.processed_at_lsn IS NOT NULL THEN c.write_checkpoint ELSE c.acknowledged_checkpoint END AS acknowledged
      )
      SELECT user_id, client_id, max(acknowledged) FROM marked GROUP BY user_id, client_id
      UNION ALL
      SELECT (SELECT head FROM here), NULL, CASE WHEN (SELECT behind FROM here) THEN -1
                                                 WHEN (SELECT complete FROM queue) THEN (SELECT count(*) FROM dequeued) END
      """.formatted(QUEUE_COMPLETE, CURRENT_HEAD);

  /** A pending row answers the id acknowledged before a write raised it (see migration 7). */
  static final String LATEST_ACKNOWLEDGED = """
      SELECT acknowledged, processed_at_lsn FROM (
        SELECT CASE WHEN processed_at_lsn IS NOT NULL THEN write_checkpoint ELSE acknowledged_checkpoint END AS acknowledged,
               processed_at_lsn
          FROM ackpoint_write_checkpoints
         WHERE user_id = $1 AND client_id = $2) a
       WHERE acknowledged IS NOT NULL
       ORDER BY acknowledged DESC, processed_at_lsn COLLATE "C" DESC NULLS LAST
       LIMIT 1
      """;

  // Compaction walks the table in id order, a window of rows per statement, instead of keeping an
  // index on checkpoint_requested_at, which every request changes (the index would make each
  // update non-HOT). SKIP LOCKED leaves rows that a batch is writing right now to the next
  // compaction; FOR UPDATE re-checks the conditions on the newest row version, so a row raised
  // (pending again) meanwhile is spared. The answer: rows deleted, and the last id of the window
  // (null once the walk has passed the end).
  static final String DELETE_EXPIRED = """
      WITH scanned AS MATERIALIZED (
        %s
      ),
      doomed AS (
        SELECT id FROM ackpoint_write_checkpoints
         WHERE id IN (SELECT id FROM scanned)
           AND checkpoint_requested_at < $1 AND processed_at_lsn IS NOT NULL
         ORDER BY id
           FOR UPDATE SKIP LOCKED
      ),
      deleted AS (
        DELETE FROM ackpoint_write_checkpoints c USING doomed WHERE c.id = doomed.id AND c.id > $3 RETURNING 1
      )
      SELECT (SELECT count(*) FROM deleted), (SELECT %s FROM scanned)
      """.formatted(window("id", "$3", "$2"), nextWindow("$2"));

  static final String COUNT = "SELECT count(*) FROM ackpoint_write_checkpoints";
}
