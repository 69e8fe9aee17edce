package io.ackpoint.impl;

import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.net.NetClientOptions;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.impl.PgConnectionFactory;
import io.vertx.pgclient.spi.PgDriver;
import io.vertx.sqlclient.spi.ConnectionFactory;

/**
 * The PostgreSQL driver of Vert.x, whose connections are bounded from their socket's connect on: a
 * TCP connect timeout, keepalive, and a {@link SilenceLimit}. The driver of Vert.x 5.0 makes every
 * connection factory with default transport options (those a pool is built with are ignored), and
 * no hook of the pool runs before a connection's start-up completes: a server that accepted a
 * connection and never answered its start-up held that connection, and the pool's close, for ever.
 * The transport options given to this driver are ignored, as the stock driver ignores them.
 */
final class BoundedPgDriver extends PgDriver {

  /** For statements that may legitimately run for long (a migration building an index). */
  static final long NO_SILENCE_LIMIT = 0;

  private final int connectTimeoutMillis;
  private final long silenceMillis;

  /**
   * @param connectTimeoutMillis bounds the TCP connect, and the wait for the server to hang up
   *     when the pool closes
   * @param silenceMillis bounds the time without a byte from the server since the last one read or
   *     written while an answer is owed, unless {@link #NO_SILENCE_LIMIT}
   */
  BoundedPgDriver(int connectTimeoutMillis, long silenceMillis) {
    this.connectTimeoutMillis = connectTimeoutMillis;
    this.silenceMillis = silenceMillis;
  }

  @Override
  public ConnectionFactory<PgConnectOptions> createConnectionFactory(Vertx vertx, NetClientOptions transportOptions) {
    return new PgConnectionFactory(new BoundedSocketsVertx((VertxInternal) vertx, connectTimeoutMillis, silenceMillis));
  }
}
