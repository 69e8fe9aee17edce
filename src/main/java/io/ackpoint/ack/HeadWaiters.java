package io.ackpoint.ack;

import io.ackpoint.AckpointError;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The legacy route's waits: each completes with the checkpoint sequence once a position at or
 * beyond its head has been applied, on whichever node applied it, or fails at its deadline. Used on
 * one event loop.
 *
 * <p>Only the positions of the engine heard last count, from its first: a new engine may start
 * below the one before it (its slot's confirmation lagged, or the source went back, see
 * {@link #rewound}), and a head between the two is passed only once it applies a position past it.
 * An engine heard before another is done: what it still announces (the statement it ran as the next
 * took over) moves no wait.
 */
final class HeadWaiters {

  private static final int ENGINES = 16;

  private final Vertx vertx;
  private final TreeMap<String, List<Promise<Long>>> waiting = new TreeMap<>();
  private String reached = "";
  private long checkpoint;
  /** The engine whose positions {@link #reached} follows; null before one said, or after a rewind. */
  private String engine;
  private final Set<String> retired = Collections.newSetFromMap(new LinkedHashMap<>(ENGINES, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
      return size() > ENGINES;
    }
  });

  HeadWaiters(Vertx vertx) {
    this.vertx = vertx;
  }

  /** The checkpoint sequence of the last position applied (0 before the first). */
  long checkpoint() {
    return checkpoint;
  }

  Future<Long> await(String head, Duration timeout) {
    if (!reached.isEmpty() && head.compareTo(reached) <= 0) {
      return Future.succeededFuture(checkpoint);
    }
    Promise<Long> promise = Promise.promise();
    waiting.computeIfAbsent(head, h -> new ArrayList<>()).add(promise);
    long timer = vertx.setTimer(Math.max(1, timeout.toMillis()), id -> {
      List<Promise<Long>> forHead = waiting.get(head);
      if (forHead != null && forHead.remove(promise)) {
        if (forHead.isEmpty()) {
          waiting.remove(head);
        }
        promise.fail(AckpointError.REPLICATION_TIMEOUT.exception(
            "replication did not reach the checkpoint within " + timeout.toSeconds() + " s"));
      }
    });
    return promise.future().onComplete(ar -> vertx.cancelTimer(timer));
  }

  /** The position applied last, "" before the first. */
  String reached() {
    return reached;
  }

  /** The engine that applied {@link #reached}, null if none said. */
  String engine() {
    return engine;
  }

  /** A position told at {@code sequence} that moves no wait (read back from storage: an engine's that may be done). */
  void told(long sequence) {
    checkpoint = Math.max(checkpoint, sequence);
  }

  /**
   * The source went back (a head read after {@code appliedBy} had applied {@link #reached} is before
   * it): what that engine applied says nothing of the new source's heads, and it is done. If another
   * engine has been heard since (the new source's), it stands.
   */
  void rewound(String appliedBy) {
    if (appliedBy != null) {
      retired.add(appliedBy);
    }
    if (Objects.equals(engine, appliedBy)) {
      engine = null;
      reached = "";
    }
  }

  /**
   * A position was applied by {@code engineId} (null: an older node did not say): every wait for a
   * head at or before it is over.
   */
  void reached(String position, long sequence, String engineId) {
    checkpoint = Math.max(checkpoint, sequence);
    if (engineId != null && !engineId.equals(engine)) {
      if (retired.contains(engineId)) {
        return;
      }
      if (engine != null) {
        retired.add(engine);
      }
      engine = engineId;
      reached = position;
    } else if (position.compareTo(reached) > 0) {
      reached = position;
    }
    Map<String, List<Promise<Long>>> passed = waiting.headMap(reached, true);
    for (List<Promise<Long>> forHead : passed.values()) {
      forHead.forEach(p -> p.tryComplete(checkpoint));
    }
    passed.clear();
  }
}
