package io.ackpoint.ack;

import io.ackpoint.AckpointException;
import io.ackpoint.EventBusAddresses;
import io.ackpoint.core.FullUserId;
import io.ackpoint.config.AckpointConfig.AcknowledgementConfig;
import io.ackpoint.metrics.AckpointMetrics;
import io.ackpoint.source.CustomCheckpoints;
import io.ackpoint.source.ReplicationSource;
import io.ackpoint.storage.CheckpointStorage;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The acknowledgement engine on the event bus: consumes {@code ackpoint.replication.progress},
 * publishes {@code ackpoint.checkpoint.reached}, and answers the HTTP verticles' questions about the
 * latest acknowledged checkpoint of a user and about the legacy head wait.
 */
public final class AckVerticle extends VerticleBase {

  private final Supplier<Future<CheckpointStorage>> storageFactory;
  private final Supplier<Future<ReplicationSource>> sourceFactory;
  private final AcknowledgementConfig config;
  private final AckpointMetrics metrics;
  private final List<MessageConsumer<?>> consumers = new ArrayList<>();
  private CheckpointStorage storage;
  private ReplicationSource source;
  private AckEngine engine;

  public AckVerticle(Supplier<Future<CheckpointStorage>> storageFactory, Supplier<Future<ReplicationSource>> sourceFactory,
                     AcknowledgementConfig config, AckpointMetrics metrics) {
    this.metrics = metrics;
    this.storageFactory = storageFactory;
    this.sourceFactory = sourceFactory;
    this.config = config;
  }

  @Override
  public Future<?> start() {
    return storageFactory.get().compose(s -> {
      storage = s;
      return sourceFactory.get();
    }).compose(s -> {
      source = s;
      engine = new AckEngine(vertx, storage, metrics);
      ExternalProgress external = new ExternalProgress(vertx, source, engine::observe, metrics::progressRejected);
      var bus = vertx.eventBus();
      consumers.add(bus.consumer(EventBusAddresses.REPLICATION_PROGRESS, msg -> external.offer(msg.body())));
      consumers.add(bus.<String>localConsumer(EventBusAddresses.POSITION_OBSERVED, msg -> engine.observe(msg.body())));
      consumers.add(bus.<JsonObject>localConsumer(EventBusAddresses.CHECKPOINT_LATEST, this::latest));
      consumers.add(bus.<JsonObject>localConsumer(EventBusAddresses.CUSTOM_CHECKPOINTS, msg ->
          engine.custom(msg.body().getString("position"), CustomCheckpoints.checkpoints(msg.body()))));
      consumers.add(bus.<Void>localConsumer(EventBusAddresses.HEAD_AWAIT, this::awaitHead));
      return Future.all(consumers.stream().map(MessageConsumer::completion).toList());
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
    Future<?> unregistered = Future.all(consumers.stream().map(MessageConsumer::unregister).toList());
    return unregistered
        .eventually(() -> storage == null ? Future.succeededFuture() : storage.close())
        .eventually(() -> source == null ? Future.succeededFuture() : source.close());
  }
}
