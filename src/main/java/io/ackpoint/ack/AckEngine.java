package io.ackpoint.ack;

import io.ackpoint.AckpointError;
import io.ackpoint.CheckpointReached;
import io.ackpoint.core.CustomCheckpoint;
import io.ackpoint.core.PositionFormat;
import io.ackpoint.core.Reached;
import io.ackpoint.storage.CheckpointStorage;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Turns observed replication positions into acknowledgements: marks the pending checkpoints at or
 * before the position as processed (one statement) and publishes a reached event for each. Runs on
 * one event loop. Positions that arrive while a statement runs are coalesced: only the greatest is
 * applied next, which acknowledges everything the smaller ones would have.
 */
public final class AckEngine {

  private static final Logger LOG = LoggerFactory.getLogger(AckEngine.class);
  private static final long RETRY_MS = 1_000;

  private final Vertx vertx;
  private final CheckpointStorage storage;
  private final AckListener listener;
  private final String reachedAddress;
  private final Checkpoints checkpoints;
  private final TreeMap<String, List<Promise<Long>>> headWaiters = new TreeMap<>();
  private String observed = "";
  private String latest = "";
  private boolean applying;
  private boolean stopped;
  private Future<Void> customStores = Future.succeededFuture();

  public AckEngine(Vertx vertx, CheckpointStorage storage, PositionFormat positions, String reachedAddress,
                   AckListener listener) {
    this.vertx = vertx;
    this.storage = storage;
    this.checkpoints = new Checkpoints(positions);
    this.reachedAddress = reachedAddress;
    this.listener = listener;
  }

  /** The checkpoint sequence number of the last applied position (0 before the first). */
  public long checkpoint() {
    return checkpoints.current();
  }

  /** No statement is started after this: the storage the engine uses is about to close. */
  void stop() {
    stopped = true;
  }

  public void observe(String position) {
    if (position.compareTo(latest) <= 0) {
      return;
    }
    latest = position;
    if (!applying) {
      apply();
    }
  }

  /**
   * Custom checkpoints committed at {@code position}: stored as pending, then acknowledged by the
   * position itself, which the follower sends once the returned future has succeeded (the rows are
   * durable). A failure is the caller's to handle: the follower restarts its stream and the source
   * sends the rows again, so nothing is dropped here. Stores are chained, and every
   * acknowledgement statement waits for the stores before it, failed or not.
   */
  public Future<Void> custom(String position, List<CustomCheckpoint> checkpoints) {
    Future<Void> stored = customStores.transform(ignored -> storage.storeCustom(position, checkpoints));
    customStores = stored.otherwiseEmpty();
    return stored;
  }

  private void apply() {
    if (stopped) {
      return;
    }
    applying = true;
    String target = latest;
    long started = System.nanoTime();
    customStores.transform(ignored -> storage.markProcessed(target)).onComplete(ar -> {
      if (ar.failed()) {
        // Nothing was marked; the same position (or a later one) is applied again shortly.
        LOG.warn("could not apply replication position {}: {}", target, ar.cause().getMessage());
        if (!stopped) {
          vertx.setTimer(RETRY_MS, id -> apply());
        }
        return;
      }
      try {
        acknowledged(target, ar.result(), System.nanoTime() - started);
      } catch (RuntimeException e) {
        // The rows are marked; whatever went wrong telling about them must not stop later positions.
        LOG.error("could not publish the acknowledgements of position {}", target, e);
      }
      applying = false;
      if (latest.compareTo(observed) > 0) {
        apply();
      }
    });
  }

  private void acknowledged(String position, List<Reached> reached, long nanos) {
    observed = position;
    listener.positionApplied(position, nanos, reached.size());
    long checkpoint = checkpoints.next(position);
    for (Reached r : reached) {
      vertx.eventBus().publish(reachedAddress, new CheckpointReached(r.user(), r.writeCheckpoint(), position, checkpoint).toJson());
    }
    releaseHeadWaiters(checkpoint);
  }

  /** Completes with the checkpoint sequence number once a position at or beyond {@code head} is applied. */
  public Future<Long> awaitHead(String head, Duration timeout) {
    if (!observed.isEmpty() && head.compareTo(observed) <= 0) {
      return Future.succeededFuture(checkpoints.current());
    }
    Promise<Long> promise = Promise.promise();
    headWaiters.computeIfAbsent(head, h -> new ArrayList<>()).add(promise);
    long timer = vertx.setTimer(Math.max(1, timeout.toMillis()), id -> {
      List<Promise<Long>> waiting = headWaiters.get(head);
      if (waiting != null && waiting.remove(promise)) {
        if (waiting.isEmpty()) {
          headWaiters.remove(head);
        }
        promise.fail(AckpointError.REPLICATION_TIMEOUT.exception(
            "replication did not reach the checkpoint within " + timeout.toSeconds() + " s"));
      }
    });
    return promise.future().onComplete(ar -> vertx.cancelTimer(timer));
  }

  private void releaseHeadWaiters(long checkpoint) {
    Map<String, List<Promise<Long>>> passed = headWaiters.headMap(observed, true);
    for (List<Promise<Long>> waiting : passed.values()) {
      waiting.forEach(p -> p.tryComplete(checkpoint));
    }
    passed.clear();
  }
}
