package io.ackpoint.source;

import io.ackpoint.config.AckpointConfig.CustomTable;
import io.ackpoint.AckpointError;
import io.ackpoint.core.PositionFormat;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;

/**
 * PostgreSQL as a source: the head is {@code pg_current_wal_lsn()}, the marker a logical decoding
 * message. The head is never taken from the emit function's return value, which is wrong on some
 * Postgres-compatible services.
 */
public final class PgReplicationSource implements ReplicationSource {

  public static final String MARKER_PREFIX = "ackpoint";
  /** The head, as PostgreSQL prints it ({@link Lsn#format(String)} pads it); the follower reads it too. */
  static final String READ_HEAD = "SELECT pg_current_wal_lsn()::text";
  // A walsender only sends flushed WAL, and a non-transactional message is not flushed by itself: a
  // marker nobody flushes is not seen until some later commit. From 17 on the 4th argument asks for
  // the flush; before 17 the marker is transactional instead, so that its commit (a durable one:
  // synchronous_commit is on) flushes it, and it is decoded at that commit.
  private static final String EMIT_MARKER_FLUSH = "SELECT pg_logical_emit_message(false, $1, $2, true)";
  private static final String EMIT_MARKER = "SELECT pg_logical_emit_message(true, $1, $2)";
  /**
   * The marker as an SQL call inside a statement that stores checkpoints in this source's database
   * (answering its position): transactional, so that it is decoded at that statement's commit, once
   * the rows it stands for are committed, and the commit (a durable one, see PgPools) flushes it on
   * every version. The follower observes it at the commit's position.
   */
  public static final String MARKER_IN_TRANSACTION = "pg_logical_emit_message(true, '" + MARKER_PREFIX + "', 'ping')";
  private static final String SLOT_STATE = """
      SELECT confirmed_flush_lsn::text,
             pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::int8,
             pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::int8
        FROM pg_replication_slots WHERE slot_name = $1
      """;

  /**
   * The table of that name is in the publication, has the configured columns (none generated), and
   * the publication publishes updates exactly if the table can have them published
   * (Publication.ensure decides the same way).
   */
  private static final String PUBLISHED_AS_ENSURED = """
      SELECT EXISTS (SELECT 1 FROM pg_publication_tables WHERE pubname = $1 AND schemaname = $2 AND tablename = $3)
         AND (%s)
         AND (SELECT pubupdate FROM pg_publication WHERE pubname = $1) = (%s)
      """.formatted(CustomTableCheck.hasColumns("$2", "$3", "$4"), CustomTableCheck.replicaIdentity("$2", "$3"));

  private final Pool pool;
  /** Learnt from the server on the first marker, so that a source that is down at start-up stops nothing. */
  private volatile String emitMarker;

  public PgReplicationSource(Pool pool) {
    this.pool = pool;
  }

  @Override
  public PositionFormat positions() {
    return Lsn.FORMAT;
  }

  @Override
  public boolean headsOrdered() {
    return true;
  }

  @Override
  public Future<String> readHead() {
    return guarded(pool.preparedQuery(READ_HEAD).execute().map(rows -> Lsn.format(rows.iterator().next().getString(0))));
  }

  @Override
  public Future<Void> forceMarker() {
    return emitMarker().compose(sql -> guarded(pool.preparedQuery(sql).execute(Tuple.of(MARKER_PREFIX, "ping")).mapEmpty()));
  }

  private Future<String> emitMarker() {
    String known = emitMarker;
    if (known != null) {
      return Future.succeededFuture(known);
    }
    return guarded(pool.query("SHOW server_version_num").execute().map(rows -> {
      String sql = Integer.parseInt(rows.iterator().next().getString(0)) >= 170000 ? EMIT_MARKER_FLUSH : EMIT_MARKER;
      emitMarker = sql;
      return sql;
    }));
  }

  /**
   * Whether {@code publication} publishes the table {@code schema.table} (names compared exactly) as
   * the follower set it up: with its updates exactly if their replica identity allows it.
   */
  public Future<Boolean> publishesAsEnsured(String publication, CustomTable table) {
    String[] columns = table.columnsByKey().values().toArray(String[]::new);
    return guarded(pool.preparedQuery(PUBLISHED_AS_ENSURED)
        .execute(Tuple.of(publication, table.schemaName(), table.tableName(), columns))
        .map(rows -> rows.iterator().next().getBoolean(0)));
  }

  /** The slot's state, or a failed future when the slot does not exist (yet). */
  public Future<SlotState> slotState(String slot) {
    return guarded(pool.preparedQuery(SLOT_STATE).execute(Tuple.of(slot))).compose(rows -> {
      if (rows.size() == 0) {
        return Future.failedFuture(AckpointError.SOURCE_UNAVAILABLE.exception("replication slot " + slot + " does not exist"));
      }
      var row = rows.iterator().next();
      String confirmed = row.getString(0);
      return Future.succeededFuture(new SlotState(slot, confirmed == null ? null : Lsn.format(confirmed),
          row.getLong(1) == null ? 0 : row.getLong(1), row.getLong(2) == null ? 0 : row.getLong(2)));
    });
  }

  private static <T> Future<T> guarded(Future<T> statement) {
    return AckpointError.SOURCE_UNAVAILABLE.onFailure(statement);
  }
}
