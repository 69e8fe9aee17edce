package io.ackpoint.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import io.ackpoint.config.AckpointConfig.ClusterConfig;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;

/**
 * The runnable service's cluster manager and event-bus options from {@code cluster.*}: Hazelcast
 * joining by TCP/IP (or Kubernetes DNS), never by multicast, bound to {@code cluster.host} and
 * announced at {@code cluster.public_host}; failure detection bounded by
 * {@code cluster.failover_timeout}. An application that embeds Ackpoint builds its own.
 */
public final class HazelcastSetup {

  /** Hazelcast's cluster name: nodes of other Hazelcast clusters listed as members by mistake are refused. */
  static final String CLUSTER_NAME = "ackpoint";

  private HazelcastSetup() {
  }

  public static ClusterManager clusterManager(ClusterConfig cluster) {
    // Before Hazelcast's first logger: its start-up lines go through SLF4J like the rest.
    System.setProperty("hazelcast.logging.type", "slf4j");
    return new HazelcastClusterManager(config(cluster));
  }

  /** The event bus between nodes: bound like Hazelcast, on its own port, announced at the public address. */
  public static EventBusOptions eventBus(ClusterConfig cluster) {
    return new EventBusOptions()
        .setHost(cluster.host())
        .setPort(cluster.eventBusPort())
        .setClusterPublicHost(cluster.advertisedHost())
        .setClusterPublicPort(cluster.eventBusPort());
  }

  /** Vert.x's own maps and multimaps (its default cluster file), with Ackpoint's network and timing. */
  static Config config(ClusterConfig cluster) {
    Config config = ConfigUtil.loadConfig();
    config.setClusterName(CLUSTER_NAME);
    NetworkConfig network = config.getNetworkConfig();
    network.setPort(cluster.port()).setPortAutoIncrement(false);
    if (cluster.publicHost() != null) {
      network.setPublicAddress(cluster.publicHost() + ":" + cluster.port());
    }
    if (!cluster.bindsAll()) {
      config.setProperty("hazelcast.socket.bind.any", "false");
      config.setProperty("hazelcast.local.localAddress", cluster.host());
    }
    JoinConfig join = network.getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    if (cluster.kubernetesServiceDns() != null) {
      join.getKubernetesConfig().setEnabled(true)
          .setProperty("service-dns", cluster.kubernetesServiceDns())
          .setProperty("service-port", Integer.toString(cluster.port()));
    } else {
      join.getTcpIpConfig().setEnabled(true).setMembers(cluster.members());
    }
    long failover = cluster.failoverTimeout().toSeconds();
    // A member silent for failover seconds is removed. Heartbeats every second: a member whose process
    // died is noticed by the refused reconnections they cause, well before the timeout.
    config.setProperty("hazelcast.max.no.heartbeat.seconds", Long.toString(failover));
    config.setProperty("hazelcast.heartbeat.interval.seconds", "1");
    // A healed partition is looked for this often (Hazelcast's defaults wait 5 minutes, then 2).
    config.setProperty("hazelcast.merge.first.run.delay.seconds", Long.toString(Math.max(5, failover)));
    config.setProperty("hazelcast.merge.next.run.delay.seconds", Long.toString(Math.max(5, failover)));
    // A joining node is let in after 1 s rather than 5: a node restarted in a rolling restart is back sooner.
    config.setProperty("hazelcast.wait.seconds.before.join", "1");
    // Vert.x leaves the cluster on close, which Main calls on SIGTERM: no hook of Hazelcast's own.
    config.setProperty("hazelcast.shutdownhook.enabled", "false");
    config.setProperty("hazelcast.phone.home.enabled", "false");
    config.setProperty("hazelcast.logging.type", "slf4j");
    return config;
  }
}
