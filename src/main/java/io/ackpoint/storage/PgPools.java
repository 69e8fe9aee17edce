package io.ackpoint.storage;

import io.ackpoint.config.AckpointConfig.DatabaseConfig;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClientOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;

/** Connection pools to PostgreSQL, for storage and for the source alike. */
public final class PgPools {

  private PgPools() {
  }

  public static Pool create(Vertx vertx, DatabaseConfig database, String name) {
    return create(vertx, database, database.poolSize(), name);
  }

  /**
   * A pool with prepared statements cached per connection and pipelining on, so that the statements
   * of concurrent batches share connections without waiting for each other's round trips.
   */
  public static Pool create(Vertx vertx, DatabaseConfig database, int maxSize, String name) {
    PgConnectOptions connect = PgConnectOptions.fromUri(database.uri())
        .setCachePreparedStatements(true)
        .setPipeliningLimit(256);
    if (connect.getProperties() == null || !connect.getProperties().containsKey("application_name")) {
      connect.addProperty("application_name", name);
    }
    // Sent at connection start-up: the server cancels any statement running longer, so a stalled
    // database (a lock held for ever, a full disk) fails batches instead of holding them.
    connect.addProperty("statement_timeout", Long.toString(database.statementTimeout().toMillis()));
    PoolOptions pool = new PoolOptions().setMaxSize(maxSize).setName(name);
    // Keepalive so the kernel eventually notices a peer that vanished; a bounded connect so a
    // database that is down fails requests quickly (503) instead of queueing them.
    NetClientOptions transport = new NetClientOptions().setTcpKeepAlive(true)
        .setConnectTimeout((int) database.connectTimeout().toMillis());
    return PgBuilder.pool().with(pool).with(transport).connectingTo(connect).using(vertx).build();
  }
}
