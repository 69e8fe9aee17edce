package io.ackpoint.http;

import io.ackpoint.core.PositionReached;
import io.ackpoint.core.Reached;
import io.ackpoint.core.FullUserId;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The subscribers of one HTTP event loop, by full user id. One event-bus consumer and one sweep timer
 * serve them all, so an open stream costs a map entry and a few small objects: no timer, no consumer
 * and no storage polling of its own. Used on its event loop only.
 */
final class AckSubscribers {

  private static final long SWEEP_MS = 1_000;

  private final Vertx vertx;
  private final String heardAddress;
  private final Map<FullUserId, List<AckSubscriber>> byUser = new HashMap<>();
  private MessageConsumer<PositionReached> consumer;
  private long sweepTimer;
  private int size;
  private long latestCheckpoint;
  private boolean waitsEnded;

  AckSubscribers(Vertx vertx, String heardAddress) {
    this.vertx = vertx;
    this.heardAddress = heardAddress;
  }

  Future<Void> start() {
    // One message per position for all its users, from this node's engine or passed on by its
    // acknowledgement verticle: this event loop tells the streams it holds.
    consumer = vertx.eventBus().localConsumer(heardAddress, msg -> {
      PositionReached reached = msg.body();
      latestCheckpoint = Math.max(latestCheckpoint, reached.checkpoint());
      String checkpoint = null;
      for (Reached r : reached.reached()) {
        List<AckSubscriber> subscribers = byUser.get(r.user());
        if (subscribers == null) {
          continue;
        }
        checkpoint = checkpoint == null ? Long.toString(reached.checkpoint()) : checkpoint;
        if (subscribers.size() == 1) {
          subscribers.get(0).reached(r.writeCheckpoint(), checkpoint);
          continue;
        }
        // A copy: a subscriber may remove itself while it is told.
        for (AckSubscriber s : List.copyOf(subscribers)) {
          s.reached(r.writeCheckpoint(), checkpoint);
        }
      }
    });
    return consumer.completion();
  }

  void add(FullUserId userId, AckSubscriber subscriber) {
    if (waitsEnded && subscriber instanceof AckWaiter waiter) {
      // Admitted after the shutdown ended the waits: it does not outwait the grace either.
      waiter.cancel();
    }
    byUser.computeIfAbsent(userId, k -> new ArrayList<>(1)).add(subscriber);
    // The sweep runs only while somebody subscribes: an idle event loop has no timer to wake it.
    if (size++ == 0) {
      sweepTimer = vertx.setPeriodic(SWEEP_MS, id -> sweep());
    }
  }

  void remove(FullUserId userId, AckSubscriber subscriber) {
    List<AckSubscriber> subscribers = byUser.get(userId);
    if (subscribers != null && subscribers.remove(subscriber)) {
      if (--size == 0) {
        vertx.cancelTimer(sweepTimer);
      }
      if (subscribers.isEmpty()) {
        byUser.remove(userId);
      }
    }
  }

  int size() {
    return size;
  }

  /** The greatest checkpoint sequence this event loop has heard of, 0 before the first. */
  long latestCheckpoint() {
    return latestCheckpoint;
  }

  private void sweep() {
    long now = System.currentTimeMillis();
    for (AckSubscriber s : all()) {
      s.tick(now);
    }
  }

  /** Graceful shutdown: ends every open stream (streams never end by themselves). */
  void endStreams() {
    for (AckSubscriber s : all()) {
      if (s instanceof AckStream stream) {
        stream.end();
      }
    }
  }

  /**
   * Every awaiting request stops waiting: it answers {@code acknowledged: false} once its checkpoint
   * is stored, as at its own deadline.
   */
  void endWaits() {
    waitsEnded = true;
    for (AckSubscriber s : all()) {
      if (s instanceof AckWaiter waiter) {
        waiter.cancel();
      }
    }
  }

  void endAll() {
    endStreams();
    endWaits();
  }

  private List<AckSubscriber> all() {
    List<AckSubscriber> all = new ArrayList<>(size);
    byUser.values().forEach(all::addAll);
    return all;
  }

  Future<Void> stop() {
    if (size > 0) {
      vertx.cancelTimer(sweepTimer);
    }
    return consumer == null ? Future.succeededFuture() : consumer.unregister();
  }
}
