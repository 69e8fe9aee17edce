package io.ackpoint.impl;

import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.internal.VertxWrapper;

/**
 * The Vert.x a PostgreSQL connection factory is made with (see {@link BoundedPgDriver}): the TCP
 * client it creates bounds its sockets. Everything else is the Vert.x it wraps.
 */
final class BoundedSocketsVertx extends VertxWrapper {

  private final int connectTimeoutMillis;
  private final long silenceMillis;

  BoundedSocketsVertx(VertxInternal delegate, int connectTimeoutMillis, long silenceMillis) {
    super(delegate);
    this.connectTimeoutMillis = connectTimeoutMillis;
    this.silenceMillis = silenceMillis;
  }

  @Override
  public NetClient createNetClient(NetClientOptions options) {
    // TCP keepalive is set on each socket as it connects, with its timing (BoundedNetClient).
    NetClientOptions bounded = new NetClientOptions(options).setConnectTimeout(connectTimeoutMillis);
    // A live server hangs up at once after the client's goodbye; one that does not within the time
    // given to connect is taken as frozen.
    return new BoundedNetClient(delegate.createNetClient(bounded), silenceMillis, connectTimeoutMillis);
  }
}
