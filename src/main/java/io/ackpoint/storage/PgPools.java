package io.ackpoint.storage;

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

  /**
   * A pool with prepared statements cached per connection and pipelining on, so that the statements
   * of concurrent batches share connections without waiting for each other's round trips.
   */
  public static Pool create(Vertx vertx, String uri, int maxSize, String name) {
    PgConnectOptions connect = PgConnectOptions.fromUri(uri)
        .setCachePreparedStatements(true)
        .setPipeliningLimit(256);
    if (connect.getProperties() == null || !connect.getProperties().containsKey("application_name")) {
      connect.addProperty("application_name", name);
    }
    PoolOptions pool = new PoolOptions().setMaxSize(maxSize).setName(name);
    // Keepalive so the kernel eventually notices a peer that vanished; a bounded connect so a
    // database that is down fails requests quickly (503) instead of queueing them.
    NetClientOptions transport = new NetClientOptions().setTcpKeepAlive(true).setConnectTimeout(5_000);
    return PgBuilder.pool().with(pool).with(transport).connectingTo(connect).using(vertx).build();
  }
}
