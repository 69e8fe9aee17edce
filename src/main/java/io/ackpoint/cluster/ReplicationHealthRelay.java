package io.ackpoint.cluster;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.core.ReplicationStatus;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;

/**
 * Readiness of replication across the cluster. The leader's follower (or external-progress watch)
 * answers {@code healthReplication} on its own node; this relay answers it on every other node by
 * asking the leader ({@link LeaderQuery}), which consumes the cluster-wide
 * {@code clusterReplicationHealth} and an address of its own. A node is thus ready for replication when the cluster's follower follows: it hears every
 * acknowledgement, wherever it is applied. With no leader, or one whose follower cannot run, no node
 * is ready, with the reason. Used on the leadership verticle's event loop.
 */
final class ReplicationHealthRelay {

  /** Within a probe's usual timeout; a leader that has just died answers nothing. */
  private static final long ASK_MILLIS = 2_000;
  private static final DeliveryOptions ASK = new DeliveryOptions().setSendTimeout(ASK_MILLIS);

  private final EventBus bus;
  private final AckpointAddresses addresses;
  private final String nodeId;
  private final String slot;
  private final LeaderQuery leader;
  private MessageConsumer<Object> asker;
  private MessageConsumer<Object> answerer;
  private MessageConsumer<Object> ownAnswerer;

  ReplicationHealthRelay(EventBus bus, AckpointAddresses addresses, String nodeId, String slot, FollowerLock record) {
    this.bus = bus;
    this.addresses = addresses;
    this.nodeId = nodeId;
    this.slot = slot;
    this.leader = new LeaderQuery(bus, addresses, record, nodeId, ASK_MILLIS);
  }

  /** This node does not lead: its readiness asks the leader. */
  Future<Void> follow() {
    return stopAnswering().compose(v -> {
      if (asker == null) {
        asker = bus.localConsumer(addresses.healthReplication(), msg -> leader.replicationHealth()
            .map(ReplicationStatus::fromJson)
            .otherwise(e -> ReplicationStatus.notReady("no node of the cluster follows replication slot " + slot
                + " now (" + e.getMessage() + "); one takes over once the follower lock is free"))
            .onComplete(ar -> msg.reply(ar.result().toJson())));
      }
      return asker.completion();
    });
  }

  /**
   * This node leads: it stops asking before its follower answers {@code healthReplication} here, and
   * answers the other nodes with what that follower says, naming itself.
   */
  Future<Void> lead() {
    return stopAsking().compose(v -> {
      if (answerer == null) {
        answerer = bus.consumer(addresses.clusterReplicationHealth(), this::answer);
        ownAnswerer = bus.consumer(addresses.clusterReplicationHealthOf(nodeId), this::answer);
      }
      return Future.all(answerer.completion(), ownAnswerer.completion()).mapEmpty();
    });
  }

  private void answer(Message<Object> msg) {
    bus.<JsonObject>request(addresses.healthReplication(), null, ASK)
        .map(reply -> reply.body().copy())
        .otherwise(e -> ReplicationStatus.notReady("the follower does not answer: " + e.getMessage()).toJson())
        .onComplete(ar -> msg.reply(withNode(ar.result())));
  }

  private JsonObject withNode(JsonObject status) {
    if (status.getString("reason") != null) {
      status.put("reason", "on node " + nodeId + ", which holds the follower lock: " + status.getString("reason"));
    }
    return status.put("node", nodeId);
  }

  Future<Void> stop() {
    return Future.join(stopAsking(), stopAnswering()).mapEmpty();
  }

  private Future<Void> stopAsking() {
    MessageConsumer<Object> consumer = asker;
    asker = null;
    return consumer == null ? Future.succeededFuture() : consumer.unregister();
  }

  private Future<Void> stopAnswering() {
    MessageConsumer<Object> consumer = answerer;
    MessageConsumer<Object> own = ownAnswerer;
    answerer = null;
    ownAnswerer = null;
    return consumer == null ? Future.succeededFuture() : Future.join(consumer.unregister(), own.unregister()).mapEmpty();
  }
}
