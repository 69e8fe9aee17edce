package io.ackpoint.ack;

import io.ackpoint.core.PositionFormat;
import io.ackpoint.source.ReplicationSource;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.NavigableSet;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * Progress published by other verticles on {@code ackpoint.replication.progress}, checked before
 * the engine sees it. A body that is not a position is rejected. A well-formed position is accepted
 * only once the source's own head has reached it: replication cannot have observed a position the
 * source has not written yet, so anything beyond the head is bogus, and accepting it would mark
 * every pending checkpoint processed before its write replicated. A read judges only the positions
 * that arrived before it began: one that arrives while it runs may have been written after it took
 * the head, and waits for the next read. Reads are shared by all the positions waiting for them.
 * Runs on the acknowledgement verticle's event loop.
 */
final class ExternalProgress {

  private static final Logger LOG = LoggerFactory.getLogger(ExternalProgress.class);
  private static final long RETRY_MS = 1_000;
  /**
   * Unverified positions kept at most, as many again while a read judges the ones before it. Past it
   * the greatest but one is rejected, each time: a genuine position is at or before the source's head
   * and a bogus one beyond it, so the smallest are kept for a flood of bogus positions (the genuine
   * ones amid it are below them all), and the greatest for a burst of genuine ones (a read that began
   * after it arrived finds the head at or past it, and it makes every smaller one moot). Only a
   * flood and a burst of more than this many at once lose genuine positions, each one counted.
   */
  private static final int MAX_WAITING = 1_024;

  private final Vertx vertx;
  private final ReplicationSource source;
  private final Consumer<String> accepted;
  private final Runnable rejected;
  /** Positions beyond the known head that arrived since the last read began. */
  private NavigableSet<String> waiting = new TreeSet<>();
  private String knownHead = "";
  private boolean reading;
  private long lastLogMillis;
  private long unloggedRejections;

  ExternalProgress(Vertx vertx, ReplicationSource source, Consumer<String> accepted, Runnable rejected) {
    this.vertx = vertx;
    this.source = source;
    this.accepted = accepted;
    this.rejected = rejected;
  }

  void offer(Object body) {
    String position = body instanceof JsonObject json && json.getValue("position") instanceof String s
        ? source.positions().canonical(s) : null;
    if (position == null) {
      reject("not a replication position: " + abbreviated(body));
      return;
    }
    if (position.compareTo(knownHead) <= 0) {
      accepted.accept(position);
      return;
    }
    waiting.add(position);
    trim(waiting);
    readHead();
  }

  private void readHead() {
    if (reading || waiting.isEmpty()) {
      return;
    }
    reading = true;
    NavigableSet<String> judged = waiting;
    waiting = new TreeSet<>();
    source.readHead().onComplete(ar -> {
      reading = false;
      if (ar.failed()) {
        // Unverified positions wait for the source to answer again; nothing is guessed meanwhile.
        waiting.addAll(judged);
        trim(waiting);
        vertx.setTimer(RETRY_MS, id -> readHead());
        return;
      }
      if (ar.result().compareTo(knownHead) > 0) {
        knownHead = ar.result();
      }
      for (String bogus : judged.tailSet(knownHead, false)) {
        reject("position " + bogus + " is beyond the source's head " + knownHead);
      }
      // Any position at or before a head the source answered is possible, whenever it arrived.
      String greatest = PositionFormat.later(judged.floor(knownHead), waiting.floor(knownHead));
      waiting.headSet(knownHead, true).clear();
      if (greatest != null) {
        accepted.accept(greatest);
      }
      readHead();
    });
  }

  private void trim(NavigableSet<String> positions) {
    while (positions.size() > MAX_WAITING) {
      String dropped = positions.lower(positions.last());
      positions.remove(dropped);
      reject("more than " + MAX_WAITING + " positions wait for a read of the source's head; " + dropped + " is dropped");
    }
  }

  private void reject(String why) {
    rejected.run();
    long now = System.currentTimeMillis();
    // One line per minute at most: a misbehaving publisher must not flood the log.
    if (now - lastLogMillis >= 60_000) {
      LOG.warn("rejected replication progress on the event bus: {}{}", why,
          unloggedRejections > 0 ? " (and " + unloggedRejections + " more since the last report)" : "");
      lastLogMillis = now;
      unloggedRejections = 0;
    } else {
      unloggedRejections++;
    }
  }

  private static String abbreviated(Object body) {
    String text = String.valueOf(body);
    return text.length() > 80 ? text.substring(0, 80) + "…" : text;
  }
}
