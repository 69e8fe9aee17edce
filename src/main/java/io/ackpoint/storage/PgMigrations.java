package io.ackpoint.storage;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Versioned schema migrations, run at startup in one transaction under an advisory lock, so that
 * several Ackpoint nodes starting together apply each migration exactly once.
 */
public final class PgMigrations {

  record Migration(int version, String description, String sql) {
  }

  static final List<Migration> MIGRATIONS = List.of(
      new Migration(1, "write checkpoints table", """
          CREATE TABLE IF NOT EXISTS ackpoint_write_checkpoints (
            id BIGSERIAL PRIMARY KEY,
            user_id TEXT NOT NULL,
            write_checkpoint BIGINT NOT NULL,
            lsns JSONB NOT NULL,
            processed_at_lsn TEXT,
            checkpoint_requested_at TIMESTAMPTZ
          );
          CREATE INDEX IF NOT EXISTS ackpoint_write_checkpoints_user_id_idx
            ON ackpoint_write_checkpoints (user_id);
          """),
      // The unique index replaces the plain one only where the data allows it: installs that already
      // hold duplicate rows per user keep the plain index, and storage tolerates the duplicates.
      // The new index is built before the old one is dropped, so there is no window without one.
      new Migration(2, "unique index on user_id", """
          DO $$
          BEGIN
            IF NOT EXISTS (SELECT 1 FROM ackpoint_write_checkpoints GROUP BY user_id HAVING count(*) > 1) THEN
              CREATE UNIQUE INDEX IF NOT EXISTS ackpoint_write_checkpoints_user_id_key
                ON ackpoint_write_checkpoints (user_id);
              DROP INDEX IF EXISTS ackpoint_write_checkpoints_user_id_idx;
            END IF;
          END
          $$;
          """),
      // The acknowledgement statement looks up pending rows by head; processed rows stay out of it.
      new Migration(3, "index on pending heads", """
          CREATE INDEX IF NOT EXISTS ackpoint_write_checkpoints_pending_idx
            ON ackpoint_write_checkpoints (((lsns->>'1') COLLATE "C"))
            WHERE processed_at_lsn IS NULL;
          """),
      // Compaction looks up processed, client-requested rows by age; generated rows stay out of it.
      new Migration(4, "index on compactable rows", """
          CREATE INDEX IF NOT EXISTS ackpoint_write_checkpoints_requested_idx
            ON ackpoint_write_checkpoints (checkpoint_requested_at)
            WHERE checkpoint_requested_at IS NOT NULL AND processed_at_lsn IS NOT NULL;
          """),
      // A full user id is the pair (sub, client id); it used to be one string, sub + "/" + client id,
      // which let sub "a/b" collide with sub "a", client "b". Existing rows are split at their last
      // '/' (SDK client ids are UUIDs, without '/'); a row with nothing on either side of it keeps
      // its whole string as the sub. The whole migration is one transaction, so the table is never
      // seen without an index on its key, and the unique index again covers installs that had one.
      new Migration(5, "client_id as its own key column", """
          ALTER TABLE ackpoint_write_checkpoints ADD COLUMN client_id TEXT NOT NULL DEFAULT '';
          CREATE INDEX ackpoint_write_checkpoints_user_client_idx
            ON ackpoint_write_checkpoints (user_id, client_id);
          DROP INDEX IF EXISTS ackpoint_write_checkpoints_user_id_key;
          DROP INDEX IF EXISTS ackpoint_write_checkpoints_user_id_idx;
          UPDATE ackpoint_write_checkpoints
             SET user_id = left(user_id, length(user_id) - strpos(reverse(user_id), '/')),
                 client_id = right(user_id, strpos(reverse(user_id), '/') - 1)
           WHERE strpos(user_id, '/') > 0 AND right(user_id, 1) <> '/'
             AND length(user_id) - strpos(reverse(user_id), '/') > 0;
          DO $$
          BEGIN
            IF NOT EXISTS (SELECT 1 FROM ackpoint_write_checkpoints GROUP BY user_id, client_id HAVING count(*) > 1) THEN
              CREATE UNIQUE INDEX ackpoint_write_checkpoints_user_client_key
                ON ackpoint_write_checkpoints (user_id, client_id);
              DROP INDEX ackpoint_write_checkpoints_user_client_idx;
            END IF;
          END
          $$;
          """),
      // Pending rows are found through their own small table, so that no index of the checkpoints
      // table covers a column a write or an acknowledgement changes: both updates are then HOT (one
      // heap record each, no index entries; see README, Benchmarks). The queue is UNLOGGED (no WAL, nothing for the walsender to decode) because
      // it can be rebuilt from the durable rows: see PendingQueueRebuild. It is built before
      // the index it replaces is dropped. Compaction walks the table by id instead of by its index.
      // A vacuum does not truncate the queue: that would wait for an exclusive lock that batches
      // keep taking away, and the queue's few pages are reused anyway.
      new Migration(6, "pending queue, HOT updates", """
          CREATE UNLOGGED TABLE ackpoint_pending (
            id BIGINT NOT NULL,
            head TEXT COLLATE "C" NOT NULL
          ) WITH (vacuum_truncate = false);
          CREATE INDEX ackpoint_pending_head_idx ON ackpoint_pending (head, id);
          DROP INDEX IF EXISTS ackpoint_write_checkpoints_pending_idx;
          DROP INDEX IF EXISTS ackpoint_write_checkpoints_requested_idx;
          ALTER TABLE ackpoint_write_checkpoints SET (fillfactor = 70);
          """),
      // One row per user: a write raising a row to a later id makes it pending again, and the id
      // acknowledged before must still be told to a stream opened meanwhile. The write that raises
      // a processed row keeps its id here (exact: the row is locked; rows acknowledged before this
      // version are covered too); no index covers it, so the updates stay HOT.
      new Migration(7, "acknowledged id kept while a later one is pending", """
          ALTER TABLE ackpoint_write_checkpoints ADD COLUMN acknowledged_checkpoint BIGINT;
          """),
      // A queue entry carries the id it was queued for, so that a position passing its head records
      // that id even when the row was raised to a later head meanwhile (PgStatements.MARK_PROCESSED).
      // Entries queued before this version have none: their rows are marked as before.
      new Migration(8, "queue entries carry their checkpoint id", """
          ALTER TABLE ackpoint_pending ADD COLUMN checkpoint BIGINT;
          """));

  private PgMigrations() {
  }

  public static Future<Integer> migrate(Pool pool) {
    return migrate(pool, MIGRATIONS);
  }

  static Future<Integer> migrate(Pool pool, List<Migration> migrations) {
    return pool.withTransaction(conn -> conn
        .query("SET LOCAL client_min_messages = warning").execute()
        .compose(v -> conn.query("SELECT pg_advisory_xact_lock(hashtext('ackpoint.migrations'))").execute())
        .compose(v -> conn.query("""
            CREATE TABLE IF NOT EXISTS ackpoint_migrations (
              version INT PRIMARY KEY,
              description TEXT NOT NULL,
              applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
            )""").execute())
        .compose(v -> conn.query("SELECT version FROM ackpoint_migrations").execute())
        .compose(rows -> {
          Set<Integer> applied = new HashSet<>();
          for (Row row : rows) {
            applied.add(row.getInteger(0));
          }
          Future<Integer> chain = Future.succeededFuture(0);
          for (Migration m : migrations) {
            if (!applied.contains(m.version())) {
              chain = chain.compose(count -> apply(conn, m).map(count + 1));
            }
          }
          return chain;
        }));
  }

  private static Future<Void> apply(SqlConnection conn, Migration m) {
    return conn.query(m.sql()).execute()
        .compose(v -> conn.preparedQuery("INSERT INTO ackpoint_migrations (version, description) VALUES ($1, $2)")
            .execute(Tuple.of(m.version(), m.description())))
        .mapEmpty();
  }
}
