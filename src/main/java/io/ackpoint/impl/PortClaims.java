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
 * The fixed ports an Ackpoint listens on ({@code http.port}, {@code metrics.port}), claimed in its
 * Vert.x before it starts. Vert.x shares a port between every server of one Vert.x that listens on
 * it, handing each connection to one of them in turn (that is how one Ackpoint serves a port from
 * every event loop): a second Ackpoint, or a server of the host, on the same port would silently
 * answer part of the other's connections, with its own database, where another process on it is
 * refused by the operating system.
 */
final class PortClaims {

  /** The ports claimed by the Ackpoints of one Vert.x (a map of that Vert.x's own). */
  private static final String PORTS = "ackpoint.ports";

  private final Vertx vertx;
  private final List<String> claimed;

  private PortClaims(Vertx vertx, List<String> claimed) {
    this.vertx = vertx;
    this.claimed = claimed;
  }

  /** Claims this configuration's fixed ports, or throws naming the key of one already in use in this Vert.x. */
  static PortClaims claim(Vertx vertx, AckpointConfig config) {
    String host = config.http().host();
    PortClaims claims = new PortClaims(vertx, new ArrayList<>());
    try {
      if (config.http().enabled()) {
        claims.add("http.port", host, config.http().port());
      }
      claims.add("metrics.port", host, config.metricsPort());
    } catch (ConfigException inUse) {
      claims.release();
      throw inUse;
    }
    return claims;
  }

  private void add(String key, String host, int port) {
    if (port <= 0) {
      return; // a random port of its own (see HttpVerticle)
    }
    String address = host + ":" + port;
    boolean hostServer = ((VertxInternal) vertx).sharedTcpServers().containsKey(new ServerID(port, host));
    if (hostServer || ports(vertx).putIfAbsent(address, Boolean.TRUE) != null) {
      throw new ConfigException(key, "another server of this Vert.x listens on " + address + " already"
          + (hostServer ? "" : " (another Ackpoint)") + ": Vert.x would share the port, each server answering some of"
          + " its connections; give each server of one Vert.x a port of its own");
    }
    claimed.add(address);
  }

  void release() {
    claimed.forEach(ports(vertx)::remove);
    claimed.clear();
  }

  private static LocalMap<String, Boolean> ports(Vertx vertx) {
    return vertx.sharedData().getLocalMap(PORTS);
  }
}
