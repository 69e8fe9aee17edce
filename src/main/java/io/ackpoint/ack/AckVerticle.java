package io.ackpoint.ack;

import io.ackpoint.AckpointException;
import io.ackpoint.EventBusAddresses;
import io.ackpoint.core.FullUserId;
import io.ackpoint.config.AckpointConfig.AcknowledgementConfig;
import io.ackpoint.config.AckpointConfig.ReplicationConfig;
import io.ackpoint.metrics.AckpointMetrics;
import io.ackpoint.source.CustomCheckpoints;
import io.ackpoint.source.ReplicationSource;
import io.ackpoint.storage.CheckpointStorage;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The acknowledgement engine on the event bus: consumes {@code ackpoint.replication.progress},
 * publishes {@code ackpoint.checkpoint.reached}, stores the follower's custom checkpoints (replying
 * once they are durable), and answers the HTTP verticles' questions about the latest acknowledged
 * checkpoint of a user and about the legacy head wait. Without the built-in follower it also answers
 * for replication's readiness: has progress arrived within {@code replication.progress_timeout}?
 */
public final class AckVerticle extends VerticleBase {

  private final Supplier<Future<CheckpointStorage>> storageFactory;
  private final Supplier<Future<ReplicationSource>> sourceFactory;
  private final AcknowledgementConfig config;
  private final ReplicationConfig replication;
  private final AckpointMetrics metrics;
  private final List<MessageConsumer<?>> consumers = new ArrayList<>();
  private CheckpointStorage storage;
  private ReplicationSource source;
  private AckEngine engine;
  private long progressCheck = -1;

  public AckVerticle(Supplier<Future<CheckpointStorage>> storageFactory, Supplier<Future<ReplicationSource>> sourceFactory,
                     AcknowledgementConfig config, ReplicationConfig replication, AckpointMetrics metrics) {
    this.metrics = metrics;
    this.storageFactory = storageFactory;
    this.sourceFactory = sourceFactory;
    this.config = config;
    this.replication = replication;
  }

  @Override
  public Future<?> start() {
    return storageFactory.get().compose(s -> {
      storage = s;
      return sourceFactory.get();
    }).compose(s -> {
      source = s;
      engine = new AckEngine(vertx, storage, metrics);
      var bus = vertx.eventBus();
      Consumer<String> accepted = engine::observe;
      if (!replication.follower()) {
        ProgressWatch progress = new ProgressWatch(replication.progressTimeout());
        accepted = position -> {
          progress.progressed();
          engine.observe(position);
        };
        consumers.add(bus.<Void>localConsumer(EventBusAddresses.HEALTH_REPLICATION, msg -> msg.reply(progress.status().toJson())));
        // Looks without being asked too, so that the log tells when progress stopped.
        progressCheck = vertx.setPeriodic(checkInterval(replication.progressTimeout()), id -> progress.status());
      }
      ExternalProgress external = new ExternalProgress(vertx, source, accepted, metrics::progressRejected);
      consumers.add(bus.consumer(EventBusAddresses.REPLICATION_PROGRESS, msg -> external.offer(msg.body())));
      consumers.add(bus.<String>localConsumer(EventBusAddresses.POSITION_OBSERVED, msg -> engine.observe(msg.body())));
      consumers.add(bus.<JsonObject>localConsumer(EventBusAddresses.CHECKPOINT_LATEST, this::latest));
      consumers.add(bus.<JsonObject>localConsumer(EventBusAddresses.CUSTOM_CHECKPOINTS, this::storeCustom));
      consumers.add(bus.<Void>localConsumer(EventBusAddresses.HEAD_AWAIT, this::awaitHead));
      return Future.all(consumers.stream().map(MessageConsumer::completion).toList());
    });
  }

  private static long checkInterval(Duration timeout) {
    return Math.max(100, Math.min(timeout.toMillis() / 4, 5_000));
  }

  /** Replies once the rows are durable: the follower confirms their position to the slot only then. */
  private void storeCustom(Message<JsonObject> msg) {
    engine.custom(msg.body().getString("position"), CustomCheckpoints.checkpoints(msg.body())).onComplete(ar -> {
      if (ar.succeeded()) {
        msg.reply(null);
      } else {
        msg.reply(AckpointException.from(ar.cause()).toReplyException());
      }
    });
  }

  private void latest(Message<JsonObject> msg) {
    long checkpoint = engine.checkpoint();
    FullUserId user = new FullUserId(msg.body().getString("user_id"), msg.body().getString("client_id"));
    storage.latestAcknowledged(user).onComplete(ar -> {
      if (ar.failed()) {
        msg.reply(AckpointException.from(ar.cause()).toReplyException());
        return;
      }
      JsonObject reply = new JsonObject().put("checkpoint", Long.toString(checkpoint));
      if (ar.result() != null) {
        reply.put("write_checkpoint", Long.toString(ar.result()));
      }
      msg.reply(reply);
    });
  }

  private void awaitHead(Message<Void> msg) {
    source.readHead()
        .compose(head -> source.forceMarker().map(head))
        .compose(head -> engine.awaitHead(head, config.legacyTimeout()))
        .onComplete(ar -> {
          if (ar.succeeded()) {
            msg.reply(new JsonObject().put("checkpoint", Long.toString(ar.result())));
          } else {
            msg.reply(AckpointException.from(ar.cause()).toReplyException());
          }
        });
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(progressCheck);
    Future<?> unregistered = Future.all(consumers.stream().map(MessageConsumer::unregister).toList());
    return unregistered
        .eventually(() -> storage == null ? Future.succeededFuture() : storage.close())
        .eventually(() -> source == null ? Future.succeededFuture() : source.close());
  }
}
