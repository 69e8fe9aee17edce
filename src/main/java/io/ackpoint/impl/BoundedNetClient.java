package io.ackpoint.impl;

import io.netty.channel.Channel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.nio.NioChannelOption;
import io.vertx.core.Future;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.ConnectOptions;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SocketAddress;
import io.vertx.core.internal.net.NetSocketInternal;

import jdk.net.ExtendedSocketOptions;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A TCP client for database connections: it puts a {@link SilenceLimit} first in each socket's
 * pipeline as the socket connects, before whoever asked for it has written a byte, and its shutdown
 * gives each open socket {@code hangUpMillis} more than the shutdown's own timeout to close, then
 * closes it. The PostgreSQL client closes a connection by saying goodbye (a Terminate message, then
 * its output shut) and waiting for the server to hang up, which a frozen server never does, whether
 * its goodbye left or waits behind bytes the server does not read: without the bound, one such
 * socket held the client's shutdown, and the pool's close and Vert.x's with it, for ever.
 */
final class BoundedNetClient implements NetClient {

  private static final int KEEPALIVE_IDLE_SECONDS = 60;
  private static final int KEEPALIVE_INTERVAL_SECONDS = 10;
  private static final int KEEPALIVE_PROBES = 3;

  private final NetClient delegate;
  private final long silenceMillis;
  private final long hangUpMillis;
  private final Set<Bounded> open = ConcurrentHashMap.newKeySet();
  private volatile long shutDownWithin = -1;

  BoundedNetClient(NetClient delegate, long silenceMillis, long hangUpMillis) {
    this.delegate = delegate;
    this.silenceMillis = silenceMillis;
    this.hangUpMillis = hangUpMillis;
  }

  private Future<NetSocket> bounded(Future<NetSocket> connecting) {
    return connecting.map(socket -> {
      Channel channel = ((NetSocketInternal) socket).channelHandlerContext().channel();
      probeWhenIdle(channel);
      Bounded entry = new Bounded(channel, new SilenceLimit(silenceMillis));
      channel.pipeline().addFirst(SilenceLimit.NAME, entry.limit());
      open.add(entry);
      channel.closeFuture().addListener(closed -> open.remove(entry));
      // Connected while the client shuts down: bounded as the sockets it found (checked after the add).
      long within = shutDownWithin;
      if (within >= 0) {
        entry.hangUpWithin(within);
      }
      return socket;
    });
  }

  /**
   * The kernel probes a peer that vanished without a word (a host gone, a cable pulled). An idle
   * connection is owed nothing, so the silence limit leaves it open: the kernel's keepalive probes it
   * after a minute without traffic, every 10 s, and closes it after 3 probes unanswered (a
   * host gone, a middlebox that dropped the connection), so that the next statement does not find it
   * dead and wait out the silence limit; the probes also keep a middlebox from dropping it (some do
   * after 4 minutes). Linux's default is 2 hours, and Vert.x has no option for it. Netty's epoll
   * options are named, not referred to: its epoll classes are optional (an application that embeds
   * Ackpoint may run on Java NIO alone), and a socket on NIO takes the JDK's options instead.
   */
  private static void probeWhenIdle(Channel channel) {
    ChannelConfig config = channel.config();
    config.setOption(ChannelOption.SO_KEEPALIVE, true);
    if (!setEpollOption(config, "TCP_KEEPIDLE", KEEPALIVE_IDLE_SECONDS)) {
      config.setOption(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPIDLE), KEEPALIVE_IDLE_SECONDS);
      config.setOption(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPINTERVAL), KEEPALIVE_INTERVAL_SECONDS);
      config.setOption(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPCOUNT), KEEPALIVE_PROBES);
      return;
    }
    setEpollOption(config, "TCP_KEEPINTVL", KEEPALIVE_INTERVAL_SECONDS);
    setEpollOption(config, "TCP_KEEPCNT", KEEPALIVE_PROBES);
  }

  /** Whether the socket took Netty's epoll option {@code name}: false when it is not an epoll socket. */
  private static boolean setEpollOption(ChannelConfig config, String name, int value) {
    String option = "io.netty.channel.epoll.EpollChannelOption#" + name;
    return ChannelOption.exists(option) && config.setOption(ChannelOption.<Integer>valueOf(option), value);
  }

  @Override
  public Future<Void> shutdown(long timeout, TimeUnit unit) {
    long within = unit.toMillis(timeout) + hangUpMillis;
    shutDownWithin = within;
    Future<Void> shutDown = delegate.shutdown(timeout, unit);
    open.forEach(bounded -> bounded.hangUpWithin(within));
    return shutDown;
  }

  private record Bounded(Channel channel, SilenceLimit limit) {

    void hangUpWithin(long millis) {
      channel.eventLoop().execute(() -> limit.awaitHangUp(millis));
    }
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
  public Future<Boolean> updateSSLOptions(ClientSSLOptions options, boolean force) {
    return delegate.updateSSLOptions(options, force);
  }
}
