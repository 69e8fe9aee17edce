package io.ackpoint.compaction;

import io.ackpoint.AckpointException;
import io.ackpoint.EventBusAddresses;
import io.ackpoint.config.AckpointConfig.CheckpointsConfig;
import io.ackpoint.config.AckpointConfig.CompactionConfig;
import io.ackpoint.storage.CheckpointStorage;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Runs compaction every {@code compaction.interval}, and once more on request from the admin route.
 * Runs never overlap: a request made during a run starts a fresh run after it.
 */
public final class CompactionVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(CompactionVerticle.class);

  private final Supplier<Future<CheckpointStorage>> storageFactory;
  private final CheckpointsConfig checkpoints;
  private final CompactionConfig config;
  private final AtomicLong deletedTotal;
  private CheckpointStorage storage;
  private Compactor compactor;
  private Future<?> last = Future.succeededFuture();
  private MessageConsumer<Void> consumer;
  private long timer;

  public CompactionVerticle(Supplier<Future<CheckpointStorage>> storageFactory, CheckpointsConfig checkpoints,
                            CompactionConfig config, AtomicLong deletedTotal) {
    this.storageFactory = storageFactory;
    this.checkpoints = checkpoints;
    this.config = config;
    this.deletedTotal = deletedTotal;
  }

  @Override
  public Future<?> start() {
    return storageFactory.get().compose(s -> {
      storage = s;
      compactor = new Compactor(storage, checkpoints.requestRetention(), config.batchSize(), Clock.systemUTC());
      timer = vertx.setPeriodic(config.interval().toMillis(), id -> compact()
          .onFailure(e -> LOG.warn("compaction failed: {}", e.getMessage())));
      consumer = vertx.eventBus().localConsumer(EventBusAddresses.COMPACTION_RUN, msg -> compact()
          .compose(result -> storage.count().map(remaining -> new JsonObject()
              .put("deleted", result.deleted())
              .put("batches", result.batches())
              .put("remaining", remaining)
              .put("retention_seconds", checkpoints.requestRetention().toSeconds())))
          .onSuccess(msg::reply)
          .onFailure(e -> msg.reply(AckpointException.from(e).toReplyException())));
      return consumer.completion();
    });
  }

  private Future<Compactor.Result> compact() {
    Future<Compactor.Result> run = last.transform(ignored -> compactor.run())
        .onSuccess(result -> {
          deletedTotal.addAndGet(result.deleted());
          if (result.deleted() > 0) {
            LOG.info("compaction deleted {} expired checkpoint requests in {} batches", result.deleted(), result.batches());
          }
        });
    last = run;
    return run;
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(timer);
    Future<Void> unregistered = consumer == null ? Future.succeededFuture() : consumer.unregister();
    return unregistered
        .eventually(() -> last.transform(ignored -> Future.succeededFuture()))
        .eventually(() -> storage == null ? Future.succeededFuture() : storage.close());
  }
}
