package io.ackpoint.impl;

import io.ackpoint.config.AckpointConfig;
import io.ackpoint.config.ConfigException;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.net.impl.ServerID;
import io.vertx.core.shareddata.LocalMap;

import java.util.ArrayList;
import java.util.List;

/**
 * What an Ackpoint takes of its Vert.x for itself, claimed before it starts and released when it is
 * closed: its event-bus prefix and its fixed ports ({@code http.port}, {@code metrics.port}).
 *
 * <p>Two Ackpoints of one Vert.x with one prefix would each answer half of the requests of the
 * other's address (two databases, two counters for one user) and publish every event twice. And
 * Vert.x shares a port between every server of one Vert.x that listens on it, handing each
 * connection to one of them in turn (that is how one Ackpoint serves a port from every event loop):
 * a second Ackpoint, or a server of the host, on the same port would silently answer part of the
 * other's connections, where another process on it is refused by the operating system.
 */
final class VertxClaims {

  /** The prefixes and ports claimed by the Ackpoints of one Vert.x (maps of that Vert.x's own). */
  private static final String PREFIXES = "ackpoint.prefixes";
  private static final String PORTS = "ackpoint.ports";

  private final Vertx vertx;
  private String prefix;
  private final List<String> ports = new ArrayList<>();

  private VertxClaims(Vertx vertx) {
    this.vertx = vertx;
  }

  /**
   * Claims this configuration's prefix and the fixed ports it serves ({@code metrics.port} only when
   * {@code servesMetrics}: its metrics are Prometheus's), or throws naming the key of one taken in
   * this Vert.x.
   */
  static VertxClaims claim(Vertx vertx, AckpointConfig config, boolean servesMetrics) {
    VertxClaims claims = new VertxClaims(vertx);
    try {
      claims.prefix(config.eventBusPrefix());
      if (config.http().enabled()) {
        claims.port("http.port", config.http().host(), config.http().port());
      }
      if (servesMetrics) {
        claims.port("metrics.port", config.http().host(), config.metricsPort());
      }
    } catch (ConfigException taken) {
      claims.release();
      throw taken;
    }
    return claims;
  }

  private void prefix(String name) {
    if (map(PREFIXES).putIfAbsent(name, Boolean.TRUE) != null) {
      throw new ConfigException("eventbus.prefix", "another Ackpoint of this Vert.x uses " + name
          + " already: give each Ackpoint of one Vert.x a prefix of its own");
    }
    prefix = name;
  }

  private void port(String key, String host, int port) {
    if (port <= 0) {
      return; // a random port of its own (see HttpVerticle)
    }
    String address = host + ":" + port;
    boolean hostServer = ((VertxInternal) vertx).sharedTcpServers().containsKey(new ServerID(port, host));
    if (hostServer || map(PORTS).putIfAbsent(address, Boolean.TRUE) != null) {
      throw new ConfigException(key, "another server of this Vert.x listens on " + address + " already"
          + (hostServer ? "" : " (another Ackpoint)") + ": Vert.x would share the port, each server answering some of"
          + " its connections; give each server of one Vert.x a port of its own");
    }
    ports.add(address);
  }

  /** Once only: a second call releases nothing (another Ackpoint may have claimed the same since). */
  void release() {
    if (prefix != null) {
      map(PREFIXES).remove(prefix);
      prefix = null;
    }
    ports.forEach(map(PORTS)::remove);
    ports.clear();
  }

  private LocalMap<String, Boolean> map(String name) {
    return vertx.sharedData().getLocalMap(name);
  }
}
