package io.ackpoint;

import io.ackpoint.ack.AckVerticle;
import io.ackpoint.batch.BatcherVerticle;
import io.ackpoint.compaction.CompactionVerticle;
import io.ackpoint.config.AckpointConfig;
import io.ackpoint.config.AckpointConfig.CheckpointMode;
import io.ackpoint.config.AckpointConfig.CustomTable;
import io.ackpoint.http.HttpQueues;
import io.ackpoint.http.HttpVerticle;
import io.ackpoint.metrics.AckpointMetrics;
import io.ackpoint.source.PgReplicationSource;
import io.ackpoint.source.ReplicationFollowerVerticle;
import io.ackpoint.source.ReplicationSource;
import io.ackpoint.storage.CheckpointStorage;
import io.ackpoint.storage.PgCheckpointStorage;
import io.ackpoint.storage.PgMigrations;
import io.ackpoint.storage.PgPools;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;

import java.util.ArrayList;
import java.util.List;

/**
 * One running Ackpoint: the verticles of a process, deployed on a given Vert.x instance. Databases
 * are reached by URI; the embedded one, if any, is started before (see {@link Main}).
 */
public final class Ackpoint {

  private final Vertx vertx;
  private final List<String> deployments;
  private final HttpQueues queues;
  private final AckpointMetrics metrics;

  private Ackpoint(Vertx vertx, List<String> deployments, HttpQueues queues, AckpointMetrics metrics) {
    this.vertx = vertx;
    this.deployments = deployments;
    this.queues = queues;
    this.metrics = metrics;
  }

  public AckpointMetrics metrics() {
    return metrics;
  }

  public static Future<Ackpoint> start(Vertx vertx, AckpointConfig config) {
    List<String> deployments = new ArrayList<>();
    AckpointMetrics metrics = new AckpointMetrics();
    HttpQueues queues = HttpQueues.of(config.http());
    metrics.bind(queues);
    BatcherVerticle batcher = new BatcherVerticle(
        () -> source(vertx, config),
        () -> storage(vertx, config),
        config.batching(),
        config.checkpoints().mode(),
        metrics);
    int instances = config.http().instances() > 0
        ? config.http().instances()
        : eventLoops(config);
    AckVerticle acknowledgements = new AckVerticle(
        () -> storage(vertx, config),
        () -> source(vertx, config),
        config.acknowledgement(),
        config.replication(),
        metrics);
    return migrate(vertx, config)
        .compose(v -> vertx.deployVerticle(batcher))
        .compose(id -> {
          deployments.add(id);
          return vertx.deployVerticle(acknowledgements);
        })
        .compose(id -> {
          deployments.add(id);
          if (!config.replication().follower()) {
            return Future.succeededFuture((String) null);
          }
          CustomTable custom = config.checkpoints().mode() == CheckpointMode.CUSTOM ? config.checkpoints().custom() : null;
          return vertx.deployVerticle(new ReplicationFollowerVerticle(
              config.source().uri(), config.replication(), custom, () -> source(vertx, config)));
        })
        .compose(id -> {
          if (id != null) {
            deployments.add(id);
          }
          return vertx.deployVerticle(new CompactionVerticle(() -> storage(vertx, config), config.checkpoints(),
              config.compaction(), metrics.compactionDeletions()));
        })
        .compose(id -> {
          deployments.add(id);
          return vertx.deployVerticle(() -> new HttpVerticle(config, queues, metrics), new DeploymentOptions().setInstances(instances));
        })
        .map(id -> {
          deployments.add(id);
          return new Ackpoint(vertx, deployments, queues, metrics);
        })
        .recover(failure -> undeploy(vertx, deployments).transform(v -> Future.failedFuture(failure)));
  }

  /** One HTTP verticle per event loop. */
  public static int eventLoops(AckpointConfig config) {
    return config.http().eventLoops() > 0 ? config.http().eventLoops() : Runtime.getRuntime().availableProcessors();
  }

  private static Future<ReplicationSource> source(Vertx vertx, AckpointConfig config) {
    Pool pool = PgPools.create(vertx, config.source(), "ackpoint-source");
    return PgReplicationSource.create(pool).map(s -> (ReplicationSource) s)
        .onFailure(e -> pool.close());
  }

  private static Future<CheckpointStorage> storage(Vertx vertx, AckpointConfig config) {
    Pool pool = PgPools.create(vertx, config.storage(), "ackpoint-storage");
    return Future.succeededFuture(new PgCheckpointStorage(pool));
  }

  /** Schema migrations run once per start, before any verticle touches storage. */
  private static Future<Void> migrate(Vertx vertx, AckpointConfig config) {
    Pool pool = PgPools.forMigrations(vertx, config.storage());
    return PgMigrations.migrate(pool)
        .recover(e -> Future.failedFuture(AckpointException.storageUnavailable(e)))
        .eventually(pool::close)
        .mapEmpty();
  }

  public HttpQueues queues() {
    return queues;
  }

  /**
   * Stops HTTP first (no new requests), then the batcher, which lets its in-flight batches finish
   * before it closes its pools.
   */
  public Future<Void> close() {
    return undeploy(vertx, deployments);
  }

  private static Future<Void> undeploy(Vertx vertx, List<String> deployments) {
    Future<Void> chain = Future.succeededFuture();
    for (int i = deployments.size() - 1; i >= 0; i--) {
      String id = deployments.get(i);
      chain = chain.compose(v -> vertx.undeploy(id));
    }
    return chain.onComplete(ar -> deployments.clear());
  }
}
