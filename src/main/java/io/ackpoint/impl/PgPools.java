package io.ackpoint.impl;

import io.ackpoint.config.AckpointConfig.DatabaseConfig;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClientOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;

import java.util.concurrent.TimeUnit;

/** Connection pools to PostgreSQL, for storage and for the source alike. */
public final class PgPools {

  private PgPools() {
  }

  /**
   * A pool with prepared statements cached per connection and pipelining on, so that the statements
   * of concurrent batches share connections without waiting for each other's round trips.
   *
   * <p>Every statement is bounded. The server cancels one that runs longer than
   * {@code statement_timeout} (a lock held for ever, a stalled disk); a connection on which nothing
   * at all arrives for longer than that plus {@code connect_timeout} is closed, failing what it
   * carried, since a live server would have answered by then (if only with the cancellation). That
   * also closes idle connections after as long; the pool opens new ones on demand.
   */
  public static Pool create(Vertx vertx, DatabaseConfig database, String name) {
    PgConnectOptions connect = connectOptions(database, name);
    // Sent at connection start-up, so it holds for every statement without a round trip of its own.
    connect.addProperty("statement_timeout", Long.toString(database.statementTimeout().toMillis()));
    NetClientOptions transport = transport(database)
        .setReadIdleTimeout((int) database.statementTimeout().plus(database.connectTimeout()).toMillis())
        .setIdleTimeoutUnit(TimeUnit.MILLISECONDS);
    return build(vertx, connect, database.poolSize(), name, transport);
  }

  /** One connection without statement bounds: schema migrations may legitimately build an index for long. */
  public static Pool forMigrations(Vertx vertx, DatabaseConfig database) {
    String name = "ackpoint-migrations";
    return build(vertx, connectOptions(database, name), 1, name, transport(database));
  }

  private static PgConnectOptions connectOptions(DatabaseConfig database, String name) {
    PgConnectOptions connect = PgConnectOptions.fromUri(database.uri())
        .setCachePreparedStatements(true)
        // The client caches only statements up to 2048 characters by default; the batch statement is longer.
        .setPreparedStatementCacheSqlLimit(16 * 1024)
        .setPipeliningLimit(256);
    if (connect.getProperties() == null || !connect.getProperties().containsKey("application_name")) {
      connect.addProperty("application_name", name);
    }
    return connect;
  }

  /**
   * Keepalive so the kernel eventually notices a peer that vanished; a bounded connect so a database
   * that is down fails requests quickly (503) instead of queueing them.
   */
  private static NetClientOptions transport(DatabaseConfig database) {
    return new NetClientOptions().setTcpKeepAlive(true).setConnectTimeout((int) database.connectTimeout().toMillis());
  }

  private static Pool build(Vertx vertx, PgConnectOptions connect, int maxSize, String name, NetClientOptions transport) {
    PoolOptions pool = new PoolOptions().setMaxSize(maxSize).setName(name);
    return PgBuilder.pool().with(pool).with(transport).connectingTo(connect).using(vertx).build();
  }

  /** {@code uri} without its password, for messages and logs. */
  static String redacted(String uri) {
    return uri.replaceFirst("(://[^:/@]+):[^@/]*@", "$1:***@");
  }

  /** A database failure in one line, with what to do about the usual ones. */
  static String explain(Throwable failure) {
    String message = failure.getMessage() == null ? failure.getClass().getSimpleName() : failure.getMessage();
    if (failure instanceof io.vertx.pgclient.PgException pg && "42501".equals(pg.getSqlState())) {
      return message + " (Ackpoint creates its tables at start-up: its role needs CREATE on the schema public,"
          + " which PostgreSQL 15 and later grant only to the database owner: GRANT CREATE ON SCHEMA public TO the role)";
    }
    return message;
  }
}
