package io.ackpoint.ack;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.AckpointException;
import io.ackpoint.CheckpointReached;
import io.ackpoint.config.AckpointConfig.AcknowledgementConfig;
import io.ackpoint.config.AckpointConfig.ReplicationConfig;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.PositionReached;
import io.ackpoint.core.Reached;
import io.ackpoint.core.CustomCheckpoints;
import io.ackpoint.source.ReplicationSource;
import io.ackpoint.storage.CheckpointStorage;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * The acknowledgement engine on the event bus: takes the follower's positions and validated progress
 * from other verticles, publishes {@code ackpoint.checkpoint.reached}, stores the follower's custom
 * checkpoints (replying once they are durable), and answers the HTTP verticles' questions about the
 * latest acknowledged checkpoint of a user and about the legacy head wait. Without the built-in
 * follower it also answers for replication's readiness: has progress arrived within
 * {@code replication.progress_timeout}?
 */
public final class AckVerticle extends VerticleBase {

  private static final DeliveryOptions LOCAL_ONLY = new DeliveryOptions().setLocalOnly(true);

  private final CheckpointStorage storage;
  private final ReplicationSource source;
  private final AcknowledgementConfig config;
  private final ReplicationConfig replication;
  private final AckListener listener;
  private final AckpointAddresses addresses;
  private AckEngine engine;
  private HeadWaiters heads;

  public AckVerticle(CheckpointStorage storage, ReplicationSource source, AcknowledgementConfig config,
                     ReplicationConfig replication, AckListener listener, AckpointAddresses addresses) {
    this.storage = storage;
    this.source = source;
    this.config = config;
    this.replication = replication;
    this.listener = listener;
    this.addresses = addresses;
  }

  @Override
  public Future<?> start() {
    engine = new AckEngine(vertx, storage, source.positions(), addresses.positionReached(), listener);
    heads = new HeadWaiters(vertx);
    var bus = vertx.eventBus();
    Consumer<String> accepted = engine::observe;
    if (!replication.follower()) {
      ProgressWatch progress = new ProgressWatch(replication.progressTimeout(), addresses.replicationProgress());
      accepted = position -> {
        progress.progressed();
        engine.observe(position);
      };
      bus.localConsumer(addresses.healthReplication(), msg -> msg.reply(progress.status().toJson()));
      // Looks without being asked too, so that the log tells when progress stopped.
      vertx.setPeriodic(checkInterval(replication.progressTimeout()), id -> progress.status());
    }
    ExternalProgress external = new ExternalProgress(vertx, source, accepted, listener::progressRejected);
    return Future.all(
        bus.<PositionReached>consumer(addresses.positionReached(), msg -> reached(msg.body())).completion(),
        bus.consumer(addresses.replicationProgress(), msg -> external.offer(msg.body())).completion(),
        bus.<String>localConsumer(addresses.positionObserved(), msg -> engine.observe(msg.body())).completion(),
        bus.<JsonObject>localConsumer(addresses.checkpointLatest(), this::latest).completion(),
        bus.<JsonObject>localConsumer(addresses.customCheckpoints(), msg -> AckpointException.reply(msg,
            engine.custom(msg.body().getString("position"), CustomCheckpoints.checkpoints(msg.body())))).completion(),
        bus.localConsumer(addresses.headAwait(), this::awaitHead).completion());
  }

  @Override
  public Future<?> stop() {
    engine.stop();
    return Future.succeededFuture();
  }

  private static long checkInterval(Duration timeout) {
    return Math.max(100, Math.min(timeout.toMillis() / 4, 5_000));
  }

  /**
   * A position was applied, here or on the node that follows replication: waits for heads before it
   * are over, and each of its users is told on {@code ackpoint.checkpoint.reached}, to this node's
   * consumers only (every node tells its own, so each consumer hears it once).
   */
  private void reached(PositionReached reached) {
    heads.reached(reached.position(), reached.checkpoint());
    for (Reached r : reached.reached()) {
      vertx.eventBus().publish(addresses.checkpointReached(),
          new CheckpointReached(r.user(), r.writeCheckpoint(), reached.position(), reached.checkpoint()).toJson(), LOCAL_ONLY);
    }
  }

  private void latest(Message<JsonObject> msg) {
    long checkpoint = heads.checkpoint();
    FullUserId user = new FullUserId(msg.body().getString("user_id"), msg.body().getString("client_id"));
    AckpointException.reply(msg, storage.latestAcknowledged(user).map(latest -> {
      JsonObject reply = new JsonObject().put("checkpoint", Long.toString(checkpoint));
      if (latest != null) {
        reply.put("write_checkpoint", Long.toString(latest));
      }
      return reply;
    }));
  }

  private void awaitHead(Message<Object> msg) {
    AckpointException.reply(msg, source.readHead()
        .compose(head -> source.forceMarker().map(head))
        .compose(head -> heads.await(head, config.legacyTimeout()))
        .map(checkpoint -> new JsonObject().put("checkpoint", Long.toString(checkpoint))));
  }
}
