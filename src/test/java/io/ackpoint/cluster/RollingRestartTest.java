package io.ackpoint.cluster;

import io.ackpoint.support.AckpointProcess;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static io.ackpoint.cluster.ClusterNodes.awaitStatus;
import static io.ackpoint.cluster.ClusterNodes.members;
import static io.ackpoint.cluster.ClusterTest.awaitAcknowledged;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every node of a two-node cluster restarted in turn (SIGTERM, then a new process) while clients
 * send checkpoint requests that await their acknowledgement: the follower moves at each restart of
 * its node, and not one request is answered "not acknowledged".
 */
class RollingRestartTest {

  private static final Duration START = Duration.ofSeconds(60);

  @Test
  void aRollingRestartUnderTrafficLosesNoAcknowledgement() throws Exception {
    String database = TestDatabase.freshDatabase();
    String slot = ClusterNodes.freshSlot();
    int clusterA = TestAckpoint.freePort();
    int clusterB = TestAckpoint.freePort();
    List<String> members = List.of("127.0.0.1:" + clusterA, "127.0.0.1:" + clusterB);
    List<Map<String, String>> envs = List.of(
        ClusterNodes.env(database, slot, "127.0.0.1", TestAckpoint.freePort(), "127.0.0.1", clusterA, members),
        ClusterNodes.env(database, slot, "127.0.0.1", TestAckpoint.freePort(), "127.0.0.1", clusterB, members));
    List<AckpointProcess> nodes = new CopyOnWriteArrayList<>();
    try {
      for (Map<String, String> env : envs) {
        nodes.add(AckpointProcess.startReady(env));
      }
      awaitStatus(nodes.get(1), START, s -> members(s) == 2);
      Traffic traffic = new Traffic(nodes, 6, "rolling");
      awaitAcknowledged(traffic, 50);
      for (int i = 0; i < nodes.size(); i++) {
        AckpointProcess old = nodes.get(i);
        assertEquals(0, old.stop(), "SIGTERM stops a node with status 0");
        int before = traffic.acknowledged();
        // While this node is away the other one serves everything, following replication.
        awaitStatus(nodes.get(1 - i), START, s -> members(s) == 1 && ClusterNodes.follows(s));
        nodes.set(i, AckpointProcess.startReady(envs.get(i)));
        awaitStatus(nodes.get(i), START, s -> members(s) == 2);
        awaitAcknowledged(traffic, before + 50);
      }
      traffic.close();
      assertEquals(List.of(), traffic.lost());
      assertTrue(traffic.retried() > 0, "some requests met a stopping node and were sent again");
      System.out.println("rolling restart: " + traffic.acknowledged() + " requests acknowledged, " + traffic.retried()
          + " sent again after meeting a stopping node, none lost");
      assertEquals(1, ClusterNodes.activeFollowers(database, slot));
    } finally {
      for (AckpointProcess node : nodes) {
        node.close();
      }
    }
  }
}
