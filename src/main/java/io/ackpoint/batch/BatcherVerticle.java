package io.ackpoint.batch;

import io.ackpoint.AckpointException;
import io.ackpoint.EventBusAddresses;
import io.ackpoint.core.FullUserId;
import io.ackpoint.config.AckpointConfig.BatchingConfig;
import io.ackpoint.config.AckpointConfig.CheckpointMode;
import io.ackpoint.metrics.AckpointMetrics;
import io.ackpoint.metrics.TimedReplicationSource;
import io.ackpoint.source.ReplicationSource;
import io.ackpoint.storage.CheckpointStorage;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;

import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Serves {@code ackpoint.checkpoint.create}: one instance per process, so that every HTTP event loop
 * feeds the same batches. Body {@code {"user_id", "client_id"?, "checkpoint_request_id"?}}, answer
 * {@code {"write_checkpoint", "replication_head"}} or a failure whose code is the HTTP status.
 */
public final class BatcherVerticle extends VerticleBase {


  private final Supplier<Future<ReplicationSource>> sourceFactory;
  private final Supplier<Future<CheckpointStorage>> storageFactory;
  private final BatchingConfig config;
  private final CheckpointMode mode;
  private final AckpointMetrics metrics;
  private ReplicationSource source;
  private CheckpointStorage storage;
  private MessageConsumer<Object> consumer;
  private MessageConsumer<CheckpointCommand> submissions;
  private MessageConsumer<Void> health;
  private CheckpointBatcher batcher;

  public BatcherVerticle(Supplier<Future<ReplicationSource>> sourceFactory,
                         Supplier<Future<CheckpointStorage>> storageFactory,
                         BatchingConfig config, CheckpointMode mode, AckpointMetrics metrics) {
    this.mode = mode;
    this.sourceFactory = sourceFactory;
    this.storageFactory = storageFactory;
    this.config = config;
    this.metrics = metrics;
  }

  @Override
  public Future<?> start() {
    return sourceFactory.get().compose(s -> {
      source = s;
      return storageFactory.get();
    }).compose(s -> {
      storage = s;
      batcher = new CheckpointBatcher(context, new TimedReplicationSource(source, metrics), metrics.timed(storage),
          config, metrics);
      health = vertx.eventBus().localConsumer(EventBusAddresses.HEALTH, this::health);
      vertx.eventBus().registerDefaultCodec(CheckpointCommand.class, new LocalCodec<>(CheckpointCommand.class));
      vertx.eventBus().registerDefaultCodec(CheckpointCreated.class, new LocalCodec<>(CheckpointCreated.class));
      consumer = vertx.eventBus().consumer(EventBusAddresses.CHECKPOINT_CREATE, this::create);
      submissions = vertx.eventBus().localConsumer(EventBusAddresses.CHECKPOINT_SUBMIT,
          msg -> reply(msg, submit(msg.body()), created -> created));
      return Future.all(consumer.completion(), submissions.completion());
    });
  }

  /** The public address: JSON in and out, validated here since any verticle may send anything. */
  private void create(Message<Object> msg) {
    Future<CheckpointCreated> created;
    try {
      created = submit(parse(msg.body() instanceof JsonObject json ? json : null));
    } catch (AckpointException e) {
      created = Future.failedFuture(e);
    }
    reply(msg, created, c -> new JsonObject()
        .put("write_checkpoint", Long.toString(c.writeCheckpoint()))
        .put("replication_head", c.replicationHead()));
  }

  private Future<CheckpointCreated> submit(CheckpointCommand command) {
    if (mode == CheckpointMode.CUSTOM) {
      // In custom mode the application owns the ids: Ackpoint creates none.
      return Future.failedFuture(new AckpointException(409, "ACK_CUSTOM_CHECKPOINT_MODE",
          "checkpoints.mode is custom: checkpoint ids are written by the application into its checkpoint table"));
    }
    return batcher.submit(command);
  }

  private static <T> void reply(Message<?> msg, Future<CheckpointCreated> created, Function<CheckpointCreated, T> body) {
    created.onComplete(ar -> {
      if (ar.succeeded()) {
        msg.reply(body.apply(ar.result()));
      } else {
        msg.reply(AckpointException.from(ar.cause()).toReplyException());
      }
    });
  }

  private void health(Message<Void> msg) {
    Future<Void> storageUp = storage.ping();
    Future<String> sourceUp = source.readHead();
    Future.join(storageUp, sourceUp).onComplete(ar -> msg.reply(new JsonObject()
        .put("storage", storageUp.succeeded())
        .put("source", sourceUp.succeeded())));
  }

  static CheckpointCommand parse(JsonObject body) {
    if (body == null) {
      throw AckpointException.badRequest("ACK_INVALID_JSON", "the message body must be a JSON object");
    }
    FullUserId user = CheckpointRequestValidation.fullUserId(body.getValue("user_id"),
        CheckpointRequestValidation.clientId(body.getValue("client_id")));
    Object requested = body.getValue("checkpoint_request_id");
    return requested == null
        ? CheckpointCommand.generated(user)
        : CheckpointCommand.requested(user, CheckpointRequestValidation.checkpointRequestId(requested));
  }

  @Override
  public Future<?> stop() {
    // Unregister first so no new command arrives; the batches in flight finish on their own
    // futures before the pools they use are closed.
    Future<?> unregistered = consumer == null ? Future.succeededFuture()
        : Future.all(consumer.unregister(), submissions.unregister()).andThen(ar -> {
          vertx.eventBus().unregisterDefaultCodec(CheckpointCommand.class);
          vertx.eventBus().unregisterDefaultCodec(CheckpointCreated.class);
        });
    return unregistered
        .compose(v -> batcher == null ? Future.succeededFuture() : batcher.drained())
        .compose(v -> storage == null ? Future.succeededFuture() : storage.close())
        .compose(v -> source == null ? Future.succeededFuture() : source.close());
  }
}
