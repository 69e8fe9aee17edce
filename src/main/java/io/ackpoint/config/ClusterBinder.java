package io.ackpoint.config;

import io.ackpoint.config.AckpointConfig.ClusterConfig;

import java.time.Duration;
import java.util.List;

/** The {@code cluster.*} keys; every error names its key. */
final class ClusterBinder {

  private static final String HOST_PORT = "\\[?[A-Za-z0-9_.:-]+]?:\\d{1,5}";
  private static final Duration MIN_FAILOVER = Duration.ofSeconds(2);
  private static final Duration MAX_FAILOVER = Duration.ofSeconds(300);

  private ClusterBinder() {
  }

  /** {@code embedded}: source or storage is the embedded database, which the nodes of a cluster cannot share. */
  static ClusterConfig bind(ConfigReader r, boolean embedded) {
    boolean enabled = r.bool("cluster.enabled");
    String host = r.string("cluster.host").trim();
    String publicHost = r.string("cluster.public_host").trim();
    List<String> members = r.stringList("cluster.members");
    String kubernetes = r.string("cluster.kubernetes_service_dns").trim();
    Duration failover = r.duration("cluster.failover_timeout");
    ClusterConfig cluster = new ClusterConfig(enabled, host, r.integer("cluster.port", 1, 65535),
        r.integer("cluster.eventbus_port", 0, 65535), publicHost.isEmpty() ? null : publicHost, members,
        kubernetes.isEmpty() ? null : kubernetes, failover);
    if (!enabled) {
      return cluster;
    }
    if (embedded) {
      throw new ConfigException("cluster.enabled", "cluster mode needs external databases, and source.type or"
          + " storage.type is embedded: each node would have a database of its own. Point source and storage of every"
          + " node at the same postgresql or mongodb databases (source.uri, storage.uri)");
    }
    if (host.isEmpty()) {
      throw new ConfigException("cluster.host", "required in cluster mode: an address of this machine the other nodes reach");
    }
    if (cluster.bindsAll() && cluster.publicHost() == null) {
      throw new ConfigException("cluster.public_host", "required when cluster.host is " + host
          + ": the other nodes need an address of this one to connect to");
    }
    for (String member : members) {
      if (!member.trim().matches(HOST_PORT) || port(member) < 1 || port(member) > 65535) {
        throw new ConfigException("cluster.members", "'" + member + "' is not host:port (e.g. 10.0.0.2:5701)");
      }
    }
    if (!kubernetes.isEmpty() && !members.isEmpty()) {
      throw new ConfigException("cluster.kubernetes_service_dns", "set either cluster.members or"
          + " cluster.kubernetes_service_dns, not both");
    }
    if (failover.toMillis() % 1000 != 0 || failover.compareTo(MIN_FAILOVER) < 0 || failover.compareTo(MAX_FAILOVER) > 0) {
      throw new ConfigException("cluster.failover_timeout", "must be whole seconds between 2s and 300s");
    }
    return cluster;
  }

  private static int port(String member) {
    String trimmed = member.trim();
    return Integer.parseInt(trimmed.substring(trimmed.lastIndexOf(':') + 1));
  }
}
