package io.ackpoint.storage;

import io.ackpoint.core.Steps;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;

import java.util.concurrent.ThreadLocalRandom;

import static io.ackpoint.storage.PgStatements.REBUILD_ABANDON;
import static io.ackpoint.storage.PgStatements.REBUILD_BEGIN;
import static io.ackpoint.storage.PgStatements.REBUILD_END;
import static io.ackpoint.storage.PgStatements.REBUILD_WINDOW;

/**
 * Rebuilds the pending queue from the durable rows after a crash of the server emptied it (see
 * {@link PgStatements#REBUILD_END} for why the proof it writes can be trusted). The table is walked
 * in id windows, each a short statement, so that a big table never meets the statement timeout.
 */
final class PendingQueueRebuild {

  /** A crash during every one of this many rebuilds in a row: the database is not usable now. */
  private static final int MAX_ROUNDS = 3;

  private final Pool pool;
  private final int window;

  PendingQueueRebuild(Pool pool, int window) {
    this.pool = pool;
    this.window = window;
  }

  Future<Void> run() {
    return round(1);
  }

  private Future<Void> round(int round) {
    // Negative and its own, so that concurrent rebuilds (two followers overlapping at a failover)
    // each know whether their own begin entry survived.
    long id = -1 - ThreadLocalRandom.current().nextLong(Long.MAX_VALUE);
    return pool.preparedQuery(REBUILD_BEGIN).execute(Tuple.of(id))
        .compose(begun -> Steps.<Long>until(0L, after -> after == null, this::queueWindowAfter))
        .onFailure(e -> pool.preparedQuery(REBUILD_ABANDON).execute(Tuple.of(id)))
        .compose(walked -> pool.preparedQuery(REBUILD_END).execute(Tuple.of(id)))
        .compose(rows -> {
          if (rows.iterator().next().getBoolean(0)) {
            return Future.<Void>succeededFuture();
          }
          return round < MAX_ROUNDS ? round(round + 1)
              : Future.failedFuture(new IllegalStateException("the pending queue was emptied " + round + " times while it was rebuilt"));
        });
  }

  /** Answers the window's last id, {@code null} once the walk has passed the end. */
  private Future<Long> queueWindowAfter(long after) {
    return pool.preparedQuery(REBUILD_WINDOW).execute(Tuple.of(after, window)).map(rows -> rows.iterator().next().getLong(0));
  }
}
