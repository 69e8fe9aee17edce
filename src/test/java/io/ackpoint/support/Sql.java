package io.ackpoint.support;

import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;

/** Direct SQL on a test database, to look at what Ackpoint stored. */
public final class Sql implements AutoCloseable {

  private final Pool pool;

  public Sql(Vertx vertx, String uri) {
    this.pool = PgBuilder.pool().connectingTo(PgConnectOptions.fromUri(uri)).using(vertx).build();
  }

  public Pool pool() {
    return pool;
  }

  public RowSet<Row> query(String sql, Object... args) {
    return Await.result(pool.preparedQuery(sql).execute(Tuple.from(args)));
  }

  public long count(String sql, Object... args) {
    return query(sql, args).iterator().next().getLong(0);
  }

  public long checkpointRows() {
    return count("SELECT count(*) FROM ackpoint_write_checkpoints");
  }

  @Override
  public void close() {
    Await.result(pool.close());
  }
}
