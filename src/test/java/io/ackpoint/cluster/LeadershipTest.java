package io.ackpoint.cluster;

import io.ackpoint.config.AckpointConfig.ClusterConfig;
import io.ackpoint.core.ReplicationStatus;
import io.ackpoint.support.Await;
import io.ackpoint.support.TestAckpoint;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.internal.VertxBootstrap;
import io.vertx.core.transport.Transport;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.ackpoint.support.TestAckpoint.ADDRESSES;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The follower lock moves to a node that can follow: Hazelcast frees it only when its holder leaves
 * the cluster, and a holder that stays a member while its follower cannot reach the source (its
 * route to the database lost, the cluster's intact) stopped acknowledgements cluster-wide for as
 * long as that lasted (found by a black-box hostile test of three nodes in network namespaces).
 */
class LeadershipTest {

  private static final String SLOT = "leadership_test";
  private static final Duration HANDOVER = Duration.ofSeconds(2);

  @Test
  void aLeaderWhoseFollowerDoesNotFollowHandsTheLockToANodeWhoseFollowerDoes() throws Exception {
    try (TwoNodes nodes = TwoNodes.start()) {
      NodeRole cutOff = new NodeRole();
      Await.result(nodes.first().deployVerticle(leadership(cutOff, ReplicationStatus.cutOff("cannot reach the source for replication"),
          new Follower.Asked(Integer.MAX_VALUE))));
      assertTrue(cutOff.leading(), "the first node takes the free lock");

      NodeRole reaching = new NodeRole();
      Follower.Asked following = new Follower.Asked(1);
      Await.result(nodes.second().deployVerticle(leadership(reaching, ReplicationStatus.READY, following)));
      assertFalse(reaching.leading(), "the second stands by");

      following.await(Duration.ofSeconds(30));
      assertTrue(reaching.leading(), "the node whose follower follows leads");
      assertFalse(cutOff.leading(), "the one whose follower did not handed over");
    }
  }

  /**
   * A source that answers and refuses (here: the slot is in use, as while the walsender of a node
   * that went silent lives on) refuses every node alike: the leader keeps the lock, however long.
   */
  @Test
  void aLeaderRefusedByASourceThatAnswersKeepsTheLock() throws Exception {
    try (TwoNodes nodes = TwoNodes.start()) {
      NodeRole refused = new NodeRole();
      // Asked every 500 ms: 12 answers take three times the handover.
      Follower.Asked asked = new Follower.Asked(12);
      Await.result(nodes.first().deployVerticle(leadership(refused,
          ReplicationStatus.notReady("replication slot \"leadership_test\" is in use by another process (pid 4242)"), asked)));
      NodeRole standing = new NodeRole();
      Await.result(nodes.second().deployVerticle(leadership(standing, ReplicationStatus.READY, new Follower.Asked(1))));

      asked.await(Duration.ofSeconds(30));
      assertTrue(refused.leading(), "the leader keeps the lock");
      assertFalse(standing.leading());
    }
  }

  /** Leadership whose one duty is a follower that answers {@code status}, counted by {@code asked}. */
  private static Leadership leadership(NodeRole role, ReplicationStatus status, Follower.Asked asked) {
    return new Leadership(Leadership.lockName(ADDRESSES, SLOT), SLOT, ADDRESSES, List.of(() -> new Follower(status, asked)),
        role, Duration.ofMillis(500), HANDOVER);
  }

  /** Answers readiness of replication on its node as a follower does. */
  private static final class Follower extends VerticleBase {

    /** Completes once followers of it were asked {@code times} times. */
    static final class Asked {
      private final int times;
      private final AtomicInteger count = new AtomicInteger();
      private final Promise<Void> reached = Promise.promise();

      Asked(int times) {
        this.times = times;
      }

      void once() {
        if (count.incrementAndGet() >= times) {
          reached.tryComplete();
        }
      }

      void await(Duration timeout) throws Exception {
        reached.future().toCompletionStage().toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      }
    }

    private final ReplicationStatus status;
    private final Asked asked;

    Follower(ReplicationStatus status, Asked asked) {
      this.status = status;
      this.asked = asked;
    }

    @Override
    public Future<?> start() {
      return vertx.eventBus().localConsumer(ADDRESSES.healthReplication(), msg -> {
        asked.once();
        msg.reply(status.toJson());
      }).completion();
    }
  }

  /** Two clustered Vert.x instances, members of one cluster. */
  private record TwoNodes(Vertx first, Vertx second) implements AutoCloseable {

    static TwoNodes start() {
      int port1 = TestAckpoint.freePort();
      int port2 = TestAckpoint.freePort();
      List<String> members = List.of("127.0.0.1:" + port1, "127.0.0.1:" + port2);
      return new TwoNodes(clustered(port1, members), clustered(port2, members));
    }

    @Override
    public void close() {
      Await.result(Future.join(first.close(), second.close()));
    }
  }

  private static Vertx clustered(int port, List<String> members) {
    ClusterConfig cluster = new ClusterConfig(true, "127.0.0.1", port, 0, null, members, null, Duration.ofSeconds(4));
    return Await.result(VertxBootstrap.create()
        .options(new VertxOptions().setEventBusOptions(HazelcastSetup.eventBus(cluster)))
        .transport(Transport.NIO.implementation())
        .clusterManager(HazelcastSetup.clusterManager(cluster))
        .init().clusteredVertx());
  }
}
