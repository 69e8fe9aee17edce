package io.ackpoint.batch;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.AckpointError;
import io.ackpoint.AckpointException;
import io.ackpoint.CheckpointRequests;
import io.ackpoint.config.AckpointConfig.BatchingConfig;
import io.ackpoint.config.AckpointConfig.CheckpointMode;
import io.ackpoint.core.CheckpointCommand;
import io.ackpoint.core.CheckpointCommands;
import io.ackpoint.core.CheckpointCreated;
import io.ackpoint.core.CheckpointOutcome;
import io.ackpoint.core.CheckpointOutcomes;
import io.ackpoint.core.CheckpointRefused;
import io.ackpoint.core.LocalCodec;
import io.ackpoint.core.PendingCheckpointsCodec;
import io.ackpoint.source.ReplicationSource;
import io.ackpoint.storage.CheckpointStorage;
import io.ackpoint.storage.ReadOnlyStorageException;
import io.ackpoint.storage.HeadStoringWriter;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Serves {@code ackpoint.checkpoint.create} (JSON, validated here since any verticle may send
 * anything) and the HTTP verticles' internal submit address (records, validated by them). One
 * instance per Ackpoint, so that every HTTP event loop feeds the same batches. It also answers the
 * readiness probe's question whether storage and source answer.
 */
public final class BatcherVerticle extends VerticleBase {

  /** How long a health check waits for each database: less than the probes' 5 s (and the status route's) wait for the reply. */
  private static final long HEALTH_CHECK_MS = 2_000;
  /** How long the engine may take to answer a rewind, before it is asked again with the next batch. */
  private static final DeliveryOptions REWIND_ANSWER = new DeliveryOptions().setSendTimeout(10_000);

  private final ReplicationSource source;
  private final CheckpointStorage storage;
  private final HeadStoringWriter oneRoundTrip;
  private final BatchingConfig config;
  private final CheckpointMode mode;
  private final BatchListener listener;
  private final AckpointAddresses addresses;
  private final List<MessageConsumer<?>> consumers = new ArrayList<>();
  private CheckpointBatcher batcher;

  /** {@code oneRoundTrip}: storage's one-round-trip writer when the source is its database, else null. */
  public BatcherVerticle(ReplicationSource source, CheckpointStorage storage, HeadStoringWriter oneRoundTrip,
                         BatchingConfig config, CheckpointMode mode, BatchListener listener, AckpointAddresses addresses) {
    this.source = source;
    this.storage = storage;
    this.oneRoundTrip = oneRoundTrip;
    this.config = config;
    this.mode = mode;
    this.listener = listener;
    this.addresses = addresses;
  }

  @Override
  public Future<?> start() {
    batcher = oneRoundTrip != null
        ? new CheckpointBatcher(context, oneRoundTrip, config, listener)
        : new CheckpointBatcher(context, source, storage, config, listener);
    DeliveryOptions asOutcomes = LocalCodec.register(vertx, CheckpointOutcomes.class);
    DeliveryOptions toEngine = PendingCheckpointsCodec.toEngine(vertx);
    var bus = vertx.eventBus();
    batcher.releaseTo(waiting -> bus.send(addresses.pendingCheckpoints(), waiting, toEngine),
        source.headsOrdered() ? head -> bus.request(addresses.sourceRewound(), head, REWIND_ANSWER) : null);
    consumers.add(bus.consumer(addresses.checkpointCreate(), this::create));
    consumers.add(bus.<CheckpointCommands>localConsumer(addresses.checkpointSubmit(), msg -> submitAll(msg, asOutcomes)));
    consumers.add(bus.localConsumer(addresses.health(), this::health));
    return Future.all(consumers.stream().map(MessageConsumer::completion).toList());
  }

  private void create(Message<Object> msg) {
    Future<CheckpointCreated> created;
    try {
      created = submit(CheckpointRequests.command(msg.body()));
    } catch (AckpointException e) {
      created = Future.failedFuture(e);
    }
    AckpointException.reply(msg, created.map(c -> new JsonObject()
        .put("write_checkpoint", Long.toString(c.writeCheckpoint()))
        .put("replication_head", c.replicationHead())));
  }

  /**
   * One message carries the commands an HTTP event loop took in during one turn. Admitted together,
   * they join the same batch, so the answer, one outcome per command, waits for nothing the commands
   * would not have waited for one by one; refused, they are answered at once.
   */
  private void submitAll(Message<CheckpointCommands> msg, DeliveryOptions asOutcomes) {
    List<Future<CheckpointCreated>> created = mode == CheckpointMode.CUSTOM
        ? msg.body().commands().stream().map(this::submit).toList()
        : batcher.submitAll(msg.body().commands());
    Future.join(created).onComplete(done -> {
      List<CheckpointOutcome> outcomes = new ArrayList<>(created.size());
      for (Future<CheckpointCreated> f : created) {
        outcomes.add(f.succeeded() ? f.result() : new CheckpointRefused(AckpointException.of(f.cause())));
      }
      msg.reply(new CheckpointOutcomes(outcomes), asOutcomes);
    });
  }

  private Future<CheckpointCreated> submit(CheckpointCommand command) {
    if (mode == CheckpointMode.CUSTOM) {
      // In custom mode the application owns the ids: Ackpoint creates none.
      return Future.failedFuture(AckpointError.CUSTOM_CHECKPOINT_MODE.exception());
    }
    return batcher.submit(command);
  }

  /**
   * Each database is asked on its own and given {@link #HEALTH_CHECK_MS} to answer, less than the
   * probes wait for this reply: a database that hangs is reported alone, not with the other one.
   */
  private void health(Message<Object> msg) {
    Future<Void> storageUp = storage.ping().timeout(HEALTH_CHECK_MS, TimeUnit.MILLISECONDS);
    Future<String> sourceUp = source.readHead().timeout(HEALTH_CHECK_MS, TimeUnit.MILLISECONDS);
    Future.join(storageUp, sourceUp).onComplete(ar -> {
      JsonObject health = new JsonObject().put("storage", storageUp.succeeded()).put("source", sourceUp.succeeded());
      if (storageUp.cause() instanceof ReadOnlyStorageException readOnly) {
        health.put("storage_problem", readOnly.getMessage());
      }
      msg.reply(health);
    });
  }

  /**
   * Unregisters first, so that no new command arrives; the batches in flight and those waiting
   * finish before this completes, and only then are the shared pools closed by whoever owns them.
   */
  @Override
  public Future<?> stop() {
    return Future.all(consumers.stream().map(MessageConsumer::unregister).toList())
        .transform(ignored -> batcher == null ? Future.succeededFuture() : batcher.drained());
  }
}
