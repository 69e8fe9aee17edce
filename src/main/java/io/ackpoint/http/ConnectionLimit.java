package io.ackpoint.http;

import com.sun.management.UnixOperatingSystemMXBean;
import io.vertx.core.http.HttpConnection;

import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Connections open at once on Ackpoint's own HTTP port, across its verticles ({@code
 * http.max_connections}). Beyond the limit a new connection is closed as soon as it is accepted:
 * the idle timeout bounds how long a connection is held, not how many, and a client opening sockets
 * faster than they time out took every file descriptor of the process, so that nothing was answered
 * any more, the probes included, and no database connection could be opened. Thread-safe: the
 * server of every event loop counts here.
 */
public final class ConnectionLimit {

  private final int max;
  private final HttpListener listener;
  private final AtomicInteger open = new AtomicInteger();

  private ConnectionLimit(int max, HttpListener listener) {
    this.max = max;
    this.listener = listener;
  }

  /** {@code configured} connections, or with 0 nine tenths of the process's file descriptor limit. */
  public static ConnectionLimit of(int configured, HttpListener listener) {
    return new ConnectionLimit(configured > 0 ? configured : nineTenthsOfTheDescriptors(), listener);
  }

  /** The rest stays for the databases, the cluster, the metrics port and the files the JVM opens. */
  private static int nineTenthsOfTheDescriptors() {
    if (ManagementFactory.getOperatingSystemMXBean() instanceof UnixOperatingSystemMXBean unix) {
      return (int) Math.max(1, Math.min(Integer.MAX_VALUE, unix.getMaxFileDescriptorCount() / 10 * 9));
    }
    return Integer.MAX_VALUE;
  }

  public int max() {
    return max;
  }

  /** Counts {@code connection} until it closes, or closes it at once if the limit is reached. */
  void accept(HttpConnection connection) {
    if (open.incrementAndGet() > max) {
      open.decrementAndGet();
      listener.connectionRefused();
      connection.close();
      return;
    }
    listener.connectionOpened();
    connection.closeHandler(closed -> {
      open.decrementAndGet();
      listener.connectionClosed();
    });
  }
}
