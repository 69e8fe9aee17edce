package io.ackpoint.compaction;

import io.ackpoint.AckpointException;
import io.ackpoint.config.AckpointConfig.CheckpointsConfig;
import io.ackpoint.config.AckpointConfig.CompactionConfig;
import io.ackpoint.storage.CheckpointStorage;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;

/**
 * Runs compaction every {@code compaction.interval}, and once more on request from the admin route.
 * Runs never overlap: a request made during a run starts a fresh run after it.
 */
public final class CompactionVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(CompactionVerticle.class);

  private final CheckpointStorage storage;
  private final CheckpointsConfig checkpoints;
  private final CompactionConfig config;
  private final CompactionListener listener;
  private final String runAddress;
  private Compactor compactor;
  private Future<?> last = Future.succeededFuture();

  public CompactionVerticle(CheckpointStorage storage, CheckpointsConfig checkpoints, CompactionConfig config,
                            CompactionListener listener, String runAddress) {
    this.storage = storage;
    this.checkpoints = checkpoints;
    this.config = config;
    this.listener = listener;
    this.runAddress = runAddress;
  }

  @Override
  public Future<?> start() {
    compactor = new Compactor(storage, checkpoints.requestRetention(), config.batchSize(), Clock.systemUTC());
    vertx.setPeriodic(config.interval().toMillis(), id -> compact().onFailure(e -> LOG.warn("compaction failed: {}", e.getMessage())));
    return vertx.eventBus().localConsumer(runAddress, msg -> AckpointException.reply(msg, compact()
        .compose(result -> storage.count().map(remaining -> new JsonObject()
            .put("deleted", result.deleted())
            .put("batches", result.batches())
            .put("remaining", remaining)
            .put("retention_seconds", checkpoints.requestRetention().toSeconds()))))).completion();
  }

  private Future<Compactor.Result> compact() {
    Future<Compactor.Result> run = last.transform(ignored -> compactor.run())
        .onSuccess(result -> {
          listener.compacted(result.deleted());
          if (result.deleted() > 0) {
            LOG.info("compaction deleted {} expired checkpoint requests in {} batches", result.deleted(), result.batches());
          }
        });
    last = run;
    return run;
  }

  /** A run in progress finishes (each of its deletes is short) before the storage it uses goes away. */
  @Override
  public Future<?> stop() {
    return last.transform(ignored -> Future.succeededFuture());
  }
}
