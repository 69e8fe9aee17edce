package io.ackpoint.storage;

import io.vertx.sqlclient.Pool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Vacuums the pending queue at most once a second while acknowledgements run. Every entry is
 * deleted within moments of its insertion, and an index scan walks the dead ones until a vacuum
 * removes them; autovacuum visits a database only once a minute, by which time tens of thousands
 * pile up at the front of the head index, where every acknowledgement starts. The queue is
 * unlogged and small, so a vacuum is short; SKIP_LOCKED, because a vacuum that waited for another
 * one's lock would hold up the statements pipelined behind it on its connection.
 */
final class PendingQueueVacuum {

  private static final Logger LOG = LoggerFactory.getLogger(PendingQueueVacuum.class);
  private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final Pool pool;
  private final AtomicBoolean running = new AtomicBoolean();
  private volatile long last = System.nanoTime();

  PendingQueueVacuum(Pool pool) {
    this.pool = pool;
  }

  /** After an acknowledgement. A failed vacuum is only a missed one: a later acknowledgement tries again. */
  void dequeued() {
    if (System.nanoTime() - last < INTERVAL_NANOS || !running.compareAndSet(false, true)) {
      return;
    }
    pool.query("VACUUM (SKIP_LOCKED) ackpoint_pending").execute().onComplete(done -> {
      if (done.failed()) {
        LOG.warn("vacuum of the pending queue failed (it is retried within a second): {}", done.cause().getMessage());
      }
      last = System.nanoTime();
      running.set(false);
    });
  }
}
