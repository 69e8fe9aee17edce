package io.ackpoint.source;

import io.ackpoint.AckpointException;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;

/**
 * PostgreSQL as a source: the head is {@code pg_current_wal_lsn()}, the marker a logical decoding
 * message. The head is never taken from the emit function's return value, which is wrong on some
 * Postgres-compatible services.
 */
public final class PgReplicationSource implements ReplicationSource {

  public static final String MARKER_PREFIX = "ackpoint";
  private static final String READ_HEAD = "SELECT pg_current_wal_lsn()::text";
  // Before 17 the message is not flushed by itself; from 17 on the 4th argument asks for a flush,
  // without which a walsender may not see the marker until some later commit.
  private static final String EMIT_MARKER_FLUSH = "SELECT pg_logical_emit_message(false, $1, $2, true)";
  private static final String EMIT_MARKER = "SELECT pg_logical_emit_message(false, $1, $2)";

  private final Pool pool;
  private final String emitMarker;

  private PgReplicationSource(Pool pool, int serverVersionNum) {
    this.pool = pool;
    this.emitMarker = serverVersionNum >= 170000 ? EMIT_MARKER_FLUSH : EMIT_MARKER;
  }

  public static Future<PgReplicationSource> create(Pool pool) {
    return pool.query("SHOW server_version_num").execute()
        .map(rows -> new PgReplicationSource(pool, Integer.parseInt(rows.iterator().next().getString(0))))
        .recover(e -> Future.failedFuture(AckpointException.sourceUnavailable(e)));
  }

  @Override
  public Future<String> readHead() {
    return pool.preparedQuery(READ_HEAD).execute()
        .<String>map(rows -> {
          Row row = rows.iterator().next();
          return Lsn.format(row.getString(0));
        })
        .recover(e -> Future.failedFuture(AckpointException.sourceUnavailable(e)));
  }

  @Override
  public Future<Void> forceMarker() {
    return pool.preparedQuery(emitMarker).execute(Tuple.of(MARKER_PREFIX, "ping"))
        .<Void>mapEmpty()
        .recover(e -> Future.failedFuture(AckpointException.sourceUnavailable(e)));
  }

  @Override
  public Future<Void> close() {
    return pool.close();
  }
}
