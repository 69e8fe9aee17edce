package io.ackpoint.support;

import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;

/**
 * A transaction holding a queue entry (of no checkpoint) whose head is the source's current one:
 * every acknowledgement statement for a later position waits for it, so storage records nothing
 * until {@link #close()}; the follower, batches and streams go on as ever.
 */
public record HeldAcknowledgements(SqlConnection conn, Transaction tx) implements AutoCloseable {

  public static HeldAcknowledgements hold(Sql sql) {
    SqlConnection conn = Await.result(sql.pool().getConnection());
    while (true) {
      // A statement for a position past the head may take the entry before it is locked: queued again then.
      sql.query("""
          INSERT INTO ackpoint_pending (id, head)
          SELECT 999999999, lpad(split_part(l, '/', 1), 8, '0') || '/' || lpad(split_part(l, '/', 2), 8, '0')
            FROM (SELECT pg_current_wal_lsn()::text) w(l)""");
      Transaction tx = Await.result(conn.begin());
      if (Await.result(conn.query("SELECT 1 FROM ackpoint_pending WHERE id = 999999999 FOR UPDATE").execute()).size() == 1) {
        return new HeldAcknowledgements(conn, tx);
      }
      Await.result(tx.rollback());
    }
  }

  @Override
  public void close() {
    Await.result(tx.rollback());
    Await.result(conn.close());
  }
}
