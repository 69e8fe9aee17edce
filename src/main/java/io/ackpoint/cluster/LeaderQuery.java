package io.ackpoint.cluster;

import io.ackpoint.AckpointAddresses;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;

/**
 * Asks the node that holds the follower lock how its follower fares ({@code {"replication": bool,
 * "reason"?, "node"}}), over the cluster-wide {@code clusterReplicationHealth}, which only the
 * leader consumes.
 *
 * <p>When that address finds no consumer, the leader named in the follower record is asked at its
 * own address. Vert.x 5.0.7 keeps one route per address on each node and recomputes it only when a
 * registration of that address changes: after a split cluster has merged, the node that led one
 * side can keep a route that names no node with the consumer (only itself, which stepped down),
 * for as long as the leader keeps its registration (eclipse-vertx/vert.x#5202; seen for minutes).
 * The record is read only then: a read of the cluster's maps waits while Hazelcast recovers the
 * partitions of a member that died. Used on one event loop.
 */
final class LeaderQuery {

  private static final Logger LOG = LoggerFactory.getLogger(LeaderQuery.class);

  private final EventBus bus;
  private final AckpointAddresses addresses;
  private final FollowerLock record;
  private final String self;
  private final long timeoutMillis;
  /** Whether the last answer came through the record: its start and its end are logged once each. */
  private boolean viaRecord;

  LeaderQuery(EventBus bus, AckpointAddresses addresses, FollowerLock record, String self, long timeoutMillis) {
    this.bus = bus;
    this.addresses = addresses;
    this.record = record;
    this.self = self;
    this.timeoutMillis = timeoutMillis;
  }

  /** The leader's answer within the timeout, fallback included: a probe waits for no longer. */
  Future<JsonObject> replicationHealth() {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    return bus.<JsonObject>request(addresses.clusterReplicationHealth(), null, within(deadline))
        .map(reply -> answered(null, reply.body()))
        .recover(e -> e instanceof ReplyException reply && reply.failureType() == ReplyFailure.NO_HANDLERS
            ? askRecordedLeader(e, deadline) : Future.failedFuture(e));
  }

  private Future<JsonObject> askRecordedLeader(Throwable noHandlers, long deadline) {
    return record.holder().timeout(within(deadline).getSendTimeout(), TimeUnit.MILLISECONDS)
        .compose(holder -> holder == null || holder.equals(self) ? Future.failedFuture(noHandlers)
            : bus.<JsonObject>request(addresses.clusterReplicationHealthOf(holder), null, within(deadline))
                .map(reply -> answered(holder, reply.body())));
  }

  /** {@code recorded}: the leader asked at its own address, or null when the cluster-wide address answered. */
  private JsonObject answered(String recorded, JsonObject health) {
    if ((recorded != null) != viaRecord) {
      viaRecord = recorded != null;
      if (viaRecord) {
        LOG.info("the cluster-wide address {} finds no consumer on this node (a route Vert.x kept from before a"
            + " merge): asking the recorded leader, node {}, at its own address", addresses.clusterReplicationHealth(), recorded);
      } else {
        LOG.info("the cluster-wide address {} reaches the leader again", addresses.clusterReplicationHealth());
      }
    }
    return health;
  }

  private static DeliveryOptions within(long deadline) {
    return new DeliveryOptions().setSendTimeout(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
  }
}
