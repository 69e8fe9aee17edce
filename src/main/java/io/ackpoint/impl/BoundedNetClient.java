package io.ackpoint.impl;

import io.netty.channel.ChannelHandler;
import io.vertx.core.Future;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.ConnectOptions;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SocketAddress;
import io.vertx.core.internal.net.NetSocketInternal;

import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A TCP client that puts a handler first in each socket's pipeline as soon as the socket connects,
 * before whoever asked for the socket has written a byte on it.
 */
final class BoundedNetClient implements NetClient {

  private final NetClient delegate;
  private final Supplier<ChannelHandler> bound;

  BoundedNetClient(NetClient delegate, Supplier<ChannelHandler> bound) {
    this.delegate = delegate;
    this.bound = bound;
  }

  private Future<NetSocket> bounded(Future<NetSocket> connecting) {
    return connecting.map(socket -> {
      ((NetSocketInternal) socket).channelHandlerContext().pipeline().addFirst(SilenceLimit.NAME, bound.get());
      return socket;
    });
  }

  @Override
  public Future<NetSocket> connect(int port, String host) {
    return bounded(delegate.connect(port, host));
  }

  @Override
  public Future<NetSocket> connect(int port, String host, String serverName) {
    return bounded(delegate.connect(port, host, serverName));
  }

  @Override
  public Future<NetSocket> connect(SocketAddress remoteAddress) {
    return bounded(delegate.connect(remoteAddress));
  }

  @Override
  public Future<NetSocket> connect(SocketAddress remoteAddress, String serverName) {
    return bounded(delegate.connect(remoteAddress, serverName));
  }

  @Override
  public Future<NetSocket> connect(ConnectOptions connectOptions) {
    return bounded(delegate.connect(connectOptions));
  }

  @Override
  public Future<Void> shutdown(long timeout, TimeUnit unit) {
    return delegate.shutdown(timeout, unit);
  }

  @Override
  public Future<Boolean> updateSSLOptions(ClientSSLOptions options, boolean force) {
    return delegate.updateSSLOptions(options, force);
  }
}
