package io.ackpoint.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import io.ackpoint.config.AckpointConfig.ClusterConfig;
import io.vertx.core.eventbus.EventBusOptions;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Hazelcast configuration made of {@code cluster.*}: joins without multicast, binds where told, fails over in time. */
class HazelcastSetupTest {

  private static ClusterConfig cluster(String host, String publicHost, List<String> members, String kubernetes) {
    return new ClusterConfig(true, host, 5801, 5802, publicHost, members, kubernetes, Duration.ofSeconds(10));
  }

  @Test
  void tcpIpJoinOnTheMembersBoundToTheHostWithoutMulticast() {
    Config config = HazelcastSetup.config(cluster("10.0.0.7", null, List.of("10.0.0.7:5801", "10.0.0.8:5801"), null));
    JoinConfig join = config.getNetworkConfig().getJoin();
    assertFalse(join.getMulticastConfig().isEnabled());
    assertFalse(join.getAutoDetectionConfig().isEnabled());
    assertTrue(join.getTcpIpConfig().isEnabled());
    assertEquals(List.of("10.0.0.7:5801", "10.0.0.8:5801"), join.getTcpIpConfig().getMembers());
    assertEquals(5801, config.getNetworkConfig().getPort());
    assertFalse(config.getNetworkConfig().isPortAutoIncrement());
    assertEquals("false", config.getProperty("hazelcast.socket.bind.any"));
    assertEquals("10.0.0.7", config.getProperty("hazelcast.local.localAddress"));
    assertNull(config.getNetworkConfig().getPublicAddress());
    assertEquals("false", config.getProperty("hazelcast.phone.home.enabled"));
    // Vert.x's own structures come from its default cluster file.
    assertTrue(config.getMultiMapConfigs().containsKey("__vertx.subs"));
  }

  @Test
  void theFailoverTimeoutBoundsHeartbeatsAndAHealedPartitionIsLookedForAsOften() {
    Config config = HazelcastSetup.config(cluster("10.0.0.7", null, List.of(), null));
    assertEquals("10", config.getProperty("hazelcast.max.no.heartbeat.seconds"));
    assertEquals("1", config.getProperty("hazelcast.heartbeat.interval.seconds"));
    assertEquals("10", config.getProperty("hazelcast.merge.next.run.delay.seconds"));
  }

  @Test
  void aWildcardBindAnnouncesThePublicAddressAndKubernetesReplacesTheMembers() {
    Config config = HazelcastSetup.config(cluster("0.0.0.0", "10.1.2.3", List.of(), "ackpoint-cluster.default.svc.cluster.local"));
    assertNull(config.getProperty("hazelcast.local.localAddress"));
    assertEquals("10.1.2.3:5801", config.getNetworkConfig().getPublicAddress());
    JoinConfig join = config.getNetworkConfig().getJoin();
    assertFalse(join.getTcpIpConfig().isEnabled());
    assertTrue(join.getKubernetesConfig().isEnabled());
    assertEquals("ackpoint-cluster.default.svc.cluster.local", join.getKubernetesConfig().getProperty("service-dns"));

    EventBusOptions bus = HazelcastSetup.eventBus(cluster("0.0.0.0", "10.1.2.3", List.of(), null));
    assertEquals("0.0.0.0", bus.getHost());
    assertEquals(5802, bus.getPort());
    assertEquals("10.1.2.3", bus.getClusterPublicHost());
  }
}
