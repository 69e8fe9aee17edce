package io.ackpoint.ack;

import io.ackpoint.core.PositionReached;
import io.ackpoint.core.Reached;
import io.ackpoint.storage.AcknowledgementHistory;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.function.BiConsumer;

/**
 * Finds the announcements of applied positions this node did not hear, and reads what they carried
 * back from storage. Each announcement names the one its engine made before; a node that has not
 * heard that one missed something (the cluster connection dropped, or the cluster was split). An
 * engine's first announcement names none: the engine before it, on a node that has died, may have
 * applied positions it never announced, so everything processed after the last position heard is
 * read back. So does an engine's first announcement after a statement that failed: it may have
 * committed, its answer lost. Until a node hears its first announcement it counts from the latest
 * position storage held processed when it started ({@link #startFrom}): its streams opened since
 * read storage, and an engine that goes on applying positions beyond it is read back. (One that
 * re-applies a lower position after a failover, then dies before announcing, is not: a gap left.)
 * Storage is the truth; an acknowledgement told twice is harmless (streams and waiters keep the
 * greatest id), one never told is not. Used on the acknowledgement verticle's event loop.
 */
final class MissedAnnouncements {

  private static final Logger LOG = LoggerFactory.getLogger(MissedAnnouncements.class);
  private static final long RETRY_MS = 1_000;
  private static final int ATTEMPTS = 3;

  private final Vertx vertx;
  private final AcknowledgementHistory history;
  private final BiConsumer<String, List<Reached>> recovered;
  /** The latest position heard of, or storage's latest processed one before that; null while unknown. */
  private String heard;
  private Future<Void> reading = Future.succeededFuture();

  /** {@code recovered}: told of each position read back, with its users, in replication order. */
  MissedAnnouncements(Vertx vertx, AcknowledgementHistory history, BiConsumer<String, List<Reached>> recovered) {
    this.vertx = vertx;
    this.history = history;
    this.recovered = recovered;
  }

  /** Where this node counts from until it hears an announcement: storage's latest processed position at its start. */
  void startFrom(String latestProcessed) {
    if (heard == null) {
      heard = latestProcessed;
    }
  }

  /** An announcement arrived from an engine (not one read back here). */
  void heard(PositionReached reached) {
    if (heard != null) {
      if (reached.previous().isEmpty()) {
        readBack(heard, null);
      } else if (reached.previous().compareTo(heard) > 0) {
        readBack(heard, reached.previous());
      }
    }
    if (heard == null || reached.position().compareTo(heard) > 0) {
      heard = reached.position();
    }
  }

  /**
   * One read at a time, in the order the gaps were found. Most find nothing (an engine's first
   * announcement at every start asks for one): only a read that finds something is logged at INFO.
   */
  private void readBack(String after, String upTo) {
    LOG.debug("reading back acknowledgements processed after '{}' up to {}", after, upTo == null ? "now" : upTo);
    reading = reading.transform(ignored -> read(after, upTo, ATTEMPTS));
  }

  private Future<Void> read(String after, String upTo, int attempts) {
    return history.processedBetween(after, upTo).map(byPosition -> {
      if (!byPosition.isEmpty()) {
        LOG.info("read back the acknowledgements of {} position(s) after '{}' that this node may have missed{}",
            byPosition.size(), after, upTo == null
                ? " (an engine started, or a statement's answer was lost)" : " (up to " + upTo + ")");
      }
      byPosition.forEach(recovered);
      return (Void) null;
    }).recover(e -> {
      if (attempts <= 1) {
        LOG.warn("could not read back the acknowledgements after {}: {}; streams of this node may miss them until the"
            + " next acknowledgement of their user", after, e.getMessage());
        return Future.succeededFuture();
      }
      return vertx.timer(RETRY_MS).compose(id -> read(after, upTo, attempts - 1));
    });
  }
}
