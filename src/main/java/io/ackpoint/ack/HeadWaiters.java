package io.ackpoint.ack;

import io.ackpoint.AckpointError;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The legacy route's waits: each completes with the checkpoint sequence once a position at or
 * beyond its head has been applied, on whichever node applied it, or fails at its deadline. Used on
 * one event loop.
 */
final class HeadWaiters {

  private final Vertx vertx;
  private final TreeMap<String, List<Promise<Long>>> waiting = new TreeMap<>();
  private String reached = "";
  private long checkpoint;

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

  /** A position was applied somewhere: every wait for a head at or before it is over. */
  void reached(String position, long sequence) {
    if (position.compareTo(reached) > 0) {
      reached = position;
    }
    checkpoint = Math.max(checkpoint, sequence);
    Map<String, List<Promise<Long>>> passed = waiting.headMap(reached, true);
    for (List<Promise<Long>> forHead : passed.values()) {
      forHead.forEach(p -> p.tryComplete(checkpoint));
    }
    passed.clear();
  }
}
