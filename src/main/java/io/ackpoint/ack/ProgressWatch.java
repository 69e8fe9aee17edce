package io.ackpoint.ack;

import io.ackpoint.core.ReplicationStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;

/**
 * Without the built-in follower, progress comes only from another verticle; if none arrives for
 * {@code replication.progress_timeout}, nothing can be acknowledged and readiness says so. Counted
 * from start-up until the first accepted progress. A change is logged once, in one line. Runs on
 * the acknowledgement verticle's event loop.
 */
final class ProgressWatch {

  private static final Logger LOG = LoggerFactory.getLogger(ProgressWatch.class);

  private final Duration timeout;
  private final String address;
  private long lastProgressNanos = System.nanoTime();
  private boolean heardAny;
  private boolean stale;

  ProgressWatch(Duration timeout, String address) {
    this.timeout = timeout;
    this.address = address;
  }

  /** An accepted position arrived (a repeated one too: the publisher is alive, the source may be idle). */
  void progressed() {
    lastProgressNanos = System.nanoTime();
    heardAny = true;
    if (stale) {
      stale = false;
      LOG.info("replication progress arrives again on {}", address);
    }
  }

  ReplicationStatus status() {
    Duration silent = Duration.ofNanos(System.nanoTime() - lastProgressNanos);
    if (silent.compareTo(timeout) <= 0) {
      return ReplicationStatus.READY;
    }
    String reason = "no replication progress on " + address
        + (heardAny ? " for more than " : " since start-up, more than ") + timeout.toMillis() + " ms"
        + " (replication.follower is false, so another verticle must publish {\"position\"} at least every"
        + " replication.progress_timeout): is the external follower running?";
    if (!stale) {
      stale = true;
      LOG.warn("{}", reason);
    }
    return ReplicationStatus.notReady(reason);
  }
}
