package io.ackpoint.cluster;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.core.ReplicationStatus;
import io.ackpoint.source.SlotState;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;

import java.util.function.Supplier;

/**
 * Answers {@code nodeStatus} with this node's part of {@code GET /admin/status}: who it is, whether
 * it follows replication, the cluster as it sees it, the replication slot as the source sees it
 * (any node can read that), and whether storage and source answer.
 */
public final class NodeStatusVerticle extends VerticleBase {

  private static final DeliveryOptions ASK = new DeliveryOptions().setSendTimeout(3_000);
  private static final long ASK_LEADER_MILLIS = 1_000;

  private final AckpointAddresses addresses;
  private final NodeRole role;
  private final String slot;
  private final boolean followerEnabled;
  private final Supplier<Future<SlotState>> slotState;
  private ClusterNode node;
  private LeaderQuery leaderQuery;

  /** {@code slotState}: null when the source has no replication slot (MongoDB). */
  public NodeStatusVerticle(AckpointAddresses addresses, NodeRole role, String slot, boolean followerEnabled,
                            Supplier<Future<SlotState>> slotState) {
    this.addresses = addresses;
    this.role = role;
    this.slot = slot;
    this.followerEnabled = followerEnabled;
    this.slotState = slotState;
  }

  @Override
  public Future<?> start() {
    node = ClusterNode.of(vertx);
    leaderQuery = new LeaderQuery(vertx.eventBus(), addresses,
        new FollowerLock(vertx, Leadership.lockName(addresses, slot), node.id()), node.id(), ASK_LEADER_MILLIS);
    return vertx.eventBus().localConsumer(addresses.nodeStatus(), this::status).completion();
  }

  private void status(Message<Object> msg) {
    boolean leading = role.leading();
    Future<Boolean> following = leading && followerEnabled ? ask(addresses.healthReplication())
        .map(json -> ReplicationStatus.fromJson(json).ready()).otherwise(false) : Future.succeededFuture(false);
    // Another leader answers for its follower naming itself, within a second: unlike a read of the
    // cluster's maps, which waits while Hazelcast recovers the partitions of a member that died, and
    // a leader that has just died answers nothing, so the status does not wait for it long.
    Future<String> leader = leading || !node.clustered() ? Future.succeededFuture(node.id())
        : leaderQuery.replicationHealth().map(reply -> reply.getString("node")).otherwise((String) null);
    Future<JsonObject> databases = ask(addresses.health()).otherwise(new JsonObject());
    Future<SlotState> slot = slotState == null ? Future.succeededFuture() : slotState.get().otherwise((SlotState) null);
    Future.all(following, leader, databases, slot).onComplete(ar -> msg.reply(new JsonObject()
        .put("node", node.id())
        .put("follower", following.result())
        .put("leader", leading)
        .put("cluster", new JsonObject().put("enabled", node.clustered()).put("members", node.members())
            .put("leader", leader.result()))
        .put("replication", replication(slot.result()))
        .put("storage", new JsonObject().put("reachable", databases.result().getBoolean("storage", false)))
        .put("source", new JsonObject().put("reachable", databases.result().getBoolean("source", false)))));
  }

  private JsonObject replication(SlotState state) {
    JsonObject json = new JsonObject().put("slot", slot);
    json.put("confirmed_position", state == null ? null : state.confirmedPosition());
    json.put("lag_bytes", state == null ? null : state.lagBytes());
    json.put("retained_wal_bytes", state == null ? null : state.retainedBytes());
    return json;
  }

  private Future<JsonObject> ask(String address) {
    return vertx.eventBus().<JsonObject>request(address, null, ASK).map(Message::body);
  }
}
