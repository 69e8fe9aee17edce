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
    int port1 = TestAckpoint.freePort();
    int port2 = TestAckpoint.freePort();
    List<String> members = List.of("127.0.0.1:" + port1, "127.0.0.1:" + port2);
    Vertx first = clustered(port1, members);
    Vertx second = clustered(port2, members);
    try {
      NodeRole cutOff = new NodeRole();
      Await.result(first.deployVerticle(leadership(cutOff, ReplicationStatus.notReady("cannot reach the source for replication"),
          Promise.promise())));
      assertTrue(cutOff.leading(), "the first node takes the free lock");

      NodeRole reaching = new NodeRole();
      Promise<Void> following = Promise.promise();
      Await.result(second.deployVerticle(leadership(reaching, ReplicationStatus.READY, following)));
      assertFalse(reaching.leading(), "the second stands by");

      following.future().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertTrue(reaching.leading(), "the node whose follower follows leads");
      assertFalse(cutOff.leading(), "the one whose follower did not handed over");
    } finally {
      Await.result(Future.join(first.close(), second.close()));
    }
  }

  /** Leadership whose one duty is a follower that answers {@code status}, and completes {@code deployed} once deployed. */
  private static Leadership leadership(NodeRole role, ReplicationStatus status, Promise<Void> deployed) {
    return new Leadership(Leadership.lockName(ADDRESSES, SLOT), SLOT, ADDRESSES, List.of(() -> new Follower(status, deployed)),
        role, Duration.ofMillis(500), HANDOVER);
  }

  /** Answers readiness of replication on its node as a follower does. */
  private static final class Follower extends VerticleBase {

    private final ReplicationStatus status;
    private final Promise<Void> deployed;

    Follower(ReplicationStatus status, Promise<Void> deployed) {
      this.status = status;
      this.deployed = deployed;
    }

    @Override
    public Future<?> start() {
      return vertx.eventBus().localConsumer(ADDRESSES.healthReplication(), msg -> msg.reply(status.toJson()))
          .completion().onSuccess(deployed::tryComplete);
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
