package io.ackpoint.cluster;

import io.ackpoint.support.AckpointProcess;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static io.ackpoint.cluster.ClusterNodes.awaitStatus;
import static io.ackpoint.cluster.ClusterNodes.follows;
import static io.ackpoint.cluster.ClusterNodes.members;
import static io.ackpoint.cluster.ClusterNodes.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two Ackpoint processes with {@code cluster.enabled} on loopback, one database: one service.
 * Acknowledgements cross nodes both ways; then a kill -9 of the follower's node moves the follower.
 * The two tests share the nodes (a node takes seconds to start), in this order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterTest {

  private static final Duration START = Duration.ofSeconds(60);

  private Vertx vertx;
  private String database;
  private String slot;
  private AckpointProcess a;
  private AckpointProcess b;

  @BeforeAll
  void startTwoNodes() throws Exception {
    vertx = Vertx.vertx();
    database = TestDatabase.freshDatabase();
    slot = ClusterNodes.freshSlot();
    int clusterA = TestAckpoint.freePort();
    int clusterB = TestAckpoint.freePort();
    List<String> members = List.of("127.0.0.1:" + clusterA, "127.0.0.1:" + clusterB);
    a = AckpointProcess.startReady(ClusterNodes.env(database, slot, "127.0.0.1", TestAckpoint.freePort(), "127.0.0.1", clusterA, members));
    // The first node follows: it found the lock free.
    awaitStatus(a, START, ClusterNodes::follows);
    b = AckpointProcess.startReady(ClusterNodes.env(database, slot, "127.0.0.1", TestAckpoint.freePort(), "127.0.0.1", clusterB, members));
    awaitStatus(a, START, s -> members(s) == 2);
    awaitStatus(b, START, s -> members(s) == 2);
  }

  @AfterAll
  void stopNodes() throws Exception {
    for (AckpointProcess node : new AckpointProcess[] {a, b}) {
      if (node != null) {
        node.close();
      }
    }
    vertx.close().await();
  }

  @Test
  @Order(1)
  void acknowledgementsCrossNodesBothWays() throws Exception {
    String followerNode = ClusterNodes.status(a).getString("node");
    // The other node names the follower's node as the cluster's leader (asked over the cluster).
    JsonObject statusB = awaitStatus(b, START, s -> followerNode.equals(s.getJsonObject("cluster").getString("leader")));
    assertFalse(follows(statusB), statusB.encode());

    try (StreamClient onB = StreamClient.syncStream(vertx, "127.0.0.1", b.port(), TestKeys.token("u1"), "c");
         StreamClient onA = StreamClient.syncStream(vertx, "127.0.0.1", a.port(), TestKeys.token("u2"), "c")) {
      onB.nextMatching(line -> line.containsKey("checkpoint_complete"));
      onA.nextMatching(line -> line.containsKey("checkpoint_complete"));

      // A request on the follower's node, acknowledged on a stream held on the other node...
      request(a, "u1", "c", 1, 0);
      assertEquals("1", onB.nextMatching(line -> line.containsKey("checkpoint_diff"))
          .getJsonObject("checkpoint_diff").getString("write_checkpoint"));
      // ...and the other way round, with ?wait answered on the node that does not follow.
      assertTrue(request(b, "u2", "c", 1, 20).getBoolean("acknowledged"));
      assertEquals("1", onA.nextMatching(line -> line.containsKey("checkpoint_diff"))
          .getJsonObject("checkpoint_diff").getString("write_checkpoint"));
    }
    // The legacy route waits on the node it was sent to for the position the follower's node applies.
    var legacy = b.get("/write-checkpoint.json", TestKeys.token("u3"));
    assertEquals(200, legacy.statusCode(), legacy.body());

    JsonObject replication = ClusterNodes.status(b).getJsonObject("replication");
    assertEquals(slot, replication.getString("slot"));
    assertNotNull(replication.getString("confirmed_position"), replication.encode());
    assertTrue(replication.getLong("retained_wal_bytes") >= 0 && replication.getLong("lag_bytes") >= 0, replication.encode());
    assertEquals(1, ClusterNodes.activeFollowers(database, slot));
  }

  /**
   * Under traffic to both nodes, each request awaiting its acknowledgement: none of them answers
   * "not acknowledged", those in flight on the follower's node when it died included (their
   * clients retry on the other node, as behind a load balancer).
   */
  @Test
  @Order(2)
  void killingTheFollowersNodeMovesTheFollowerAndLosesNoAcknowledgement() throws Exception {
    try (StreamClient onB = StreamClient.syncStream(vertx, "127.0.0.1", b.port(), TestKeys.token("k1"), "c")) {
      onB.nextMatching(line -> line.containsKey("checkpoint_complete"));
      Traffic traffic = new Traffic(new CopyOnWriteArrayList<>(List.of(a, b)), 6, "kill");
      awaitAcknowledged(traffic, 50);

      long killed = System.nanoTime();
      a.kill();
      JsonObject status = awaitStatus(b, Duration.ofSeconds(60), ClusterNodes::follows);
      long failoverMillis = (System.nanoTime() - killed) / 1_000_000;
      System.out.println(java.time.Instant.now() + " failover after kill -9 of the follower's node: " + failoverMillis + " ms"
          + " (cluster.failover_timeout " + ClusterNodes.FAILOVER_TIMEOUT + ")");
      assertEquals(1, members(status), status.encode());
      assertTrue(status.getBoolean("leader"), status.encode());

      int beforeFailover = traffic.acknowledged();
      awaitAcknowledged(traffic, beforeFailover + 50);
      traffic.close();
      assertEquals(List.of(), traffic.lost());

      // The survivor acknowledges new requests, on its streams too.
      assertTrue(request(b, "k1", "c", 1, 20).getBoolean("acknowledged"));
      assertEquals("1", onB.nextMatching(line -> line.containsKey("checkpoint_diff"))
          .getJsonObject("checkpoint_diff").getString("write_checkpoint"));
    }
    assertEquals(1, ClusterNodes.activeFollowers(database, slot));
  }

  static void awaitAcknowledged(Traffic traffic, int count) throws InterruptedException {
    traffic.awaitAcknowledged(count, Duration.ofSeconds(60));
  }
}
