package io.ackpoint.config;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * The ports a configuration has Ackpoint's own servers listen on, tried before anything is set up: a port another
 * process held failed the start only once the migrations had run and the replication slot was made,
 * and a first start that never succeeded left that slot on the source, holding back its WAL for
 * good. The servers still bind for themselves (a port taken in between fails the start as before).
 * Blocking (a bind, and the host's name resolved): call it off the event loops.
 *
 * <p>A bind without a listen: a server socket would accept the connections made in that instant (a
 * load balancer's, a probe's) and reset them as it closed.
 */
public final class FreePorts {

  private FreePorts() {
  }

  /** {@code servesMetrics}: whether this Ackpoint serves metrics at all (its registry is Prometheus's). */
  public static void require(AckpointConfig config, boolean servesMetrics) {
    String host = config.http().host();
    if (config.http().enabled() && config.http().port() > 0) {
      probe(host, config.http().port(), "http.host, http.port");
    }
    if (servesMetrics && config.metricsPort() > 0) {
      probe(host, config.metricsPort(), "http.host, metrics.port");
    }
  }

  private static void probe(String host, int port, String keys) {
    IOException inUse = bindFailure(new InetSocketAddress(host, port));
    if (inUse != null) {
      throw new IllegalStateException("could not listen on " + host + ":" + port + " (" + keys + "): " + inUse.getMessage(), inUse);
    }
  }

  /** Why {@code address} cannot be bound (another socket listens there), or null when it can. */
  public static IOException bindFailure(InetSocketAddress address) {
    try (Socket socket = new Socket()) {
      // As servers bind: a port whose last connections linger in TIME_WAIT is free; one that
      // another socket listens on is not.
      socket.setReuseAddress(true);
      socket.bind(address);
      return null;
    } catch (IOException e) {
      return e;
    }
  }
}
