package io.ackpoint.source;

import io.ackpoint.EventBusAddresses;
import io.ackpoint.config.AckpointConfig.CustomTable;
import io.ackpoint.config.AckpointConfig.ReplicationConfig;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Follows the source's replication stream and publishes every position it observes on
 * {@code ackpoint.replication.progress}. The blocking stream runs on a worker thread of its own; the
 * heartbeat marker runs on this verticle's event loop. After every (re)connect a marker is forced,
 * so checkpoints left pending by a crash or a dropped connection are acknowledged without waiting
 * for other traffic. The verticle has started once the first connection attempt is over: on success
 * the slot exists, so every commit after that is seen.
 */
public final class ReplicationFollowerVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(ReplicationFollowerVerticle.class);
  private static final long MAX_BACKOFF_MS = 5_000;

  private final String uri;
  private final ReplicationConfig config;
  private final CustomTable customTable;
  private final Supplier<Future<ReplicationSource>> sourceFactory;
  private ReplicationSource source;
  private WorkerExecutor worker;
  private volatile boolean stopped;
  private volatile PgLogicalStream current;
  private long heartbeatTimer;
  private final Promise<Void> firstAttempt = Promise.promise();

  /** {@code customTable} is null in managed mode. */
  public ReplicationFollowerVerticle(String uri, ReplicationConfig config, CustomTable customTable,
                                     Supplier<Future<ReplicationSource>> sourceFactory) {
    this.uri = uri;
    this.config = config;
    this.customTable = customTable;
    this.sourceFactory = sourceFactory;
  }

  @Override
  public Future<?> start() {
    return sourceFactory.get().map(s -> {
      source = s;
      heartbeatTimer = vertx.setPeriodic(config.heartbeatInterval().toMillis(), id -> heartbeat());
      // A thread of its own, allowed to block for as long as the stream lives.
      worker = vertx.createSharedWorkerExecutor("ackpoint-replication-" + deploymentID(), 1, 365, TimeUnit.DAYS);
      worker.executeBlocking(() -> {
        follow();
        return null;
      }, false);
      return null;
    }).compose(v -> firstAttempt.future());
  }

  private void heartbeat() {
    source.forceMarker().onFailure(e -> LOG.warn("heartbeat marker failed: {}", e.getMessage()));
  }

  private void follow() {
    long backoff = 100;
    while (!stopped) {
      try (PgLogicalStream stream = PgLogicalStream.open(uri, config, customTable)) {
        current = stream;
        backoff = 100;
        // The slot exists from here on: every later commit will be seen.
        firstAttempt.tryComplete();
        LOG.info("following replication slot {}", config.slotName());
        context.runOnContext(v -> heartbeat());
        PgLogicalStream.Observed observed;
        while (!stopped && (observed = stream.next()) != null) {
          if (!observed.custom().isEmpty()) {
            // Sent before the position, from this one thread: the engine stores them first.
            vertx.eventBus().send(EventBusAddresses.CUSTOM_CHECKPOINTS, CustomCheckpoints.toJson(observed.position(), observed.custom()));
          }
          vertx.eventBus().send(EventBusAddresses.POSITION_OBSERVED, observed.position());
          stream.confirm(observed.position());
        }
      } catch (SQLException | RuntimeException e) {
        if (!stopped) {
          LOG.warn("replication stream lost ({}), reconnecting in {} ms", e.getMessage(), backoff);
        }
        // A source that is down at start does not stop Ackpoint from starting; readiness says so.
        firstAttempt.tryComplete();
      } finally {
        current = null;
      }
      if (!stopped) {
        pause(backoff);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  /** Waits between reconnects, on the follower's own worker thread, never on an event loop. */
  private static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public Future<?> stop() {
    stopped = true;
    vertx.cancelTimer(heartbeatTimer);
    PgLogicalStream stream = current;
    // Aborting from here unblocks the worker's read; the worker then sees stopped and ends.
    Future<Void> closed = stream == null ? Future.succeededFuture()
        : vertx.executeBlocking(() -> {
          stream.abort();
          return null;
        });
    return closed
        .eventually(() -> worker == null ? Future.succeededFuture() : worker.close())
        .eventually(() -> source == null ? Future.succeededFuture() : source.close());
  }
}
