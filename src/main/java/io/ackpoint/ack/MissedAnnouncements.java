package io.ackpoint.ack;

import io.ackpoint.core.PositionReached;
import io.ackpoint.core.Reached;
import io.ackpoint.storage.AcknowledgementHistory;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Finds the announcements of applied positions this node did not hear, and reads what they carried
 * back from storage. Each announcement names the one its engine made before; a node that has not
 * heard that one from that engine missed something (the cluster connection dropped, or the cluster
 * was split). An engine's first announcement names none: the engine before it, on a node that has
 * died, may have applied positions it never announced. So does an engine's first announcement after
 * a statement that failed: it may have committed, its answer lost. Until a node hears its first
 * announcement it counts from the latest position storage held processed when it started
 * ({@link #startFrom}): its streams opened since read storage.
 *
 * <p>Positions are compared within one engine: a new engine starts from the slot's confirmed
 * position, which lags what the engine before it announced, so its first positions may be below
 * everything a node has heard, and a gap among them, or a lost answer, is below it too. So a node
 * keeps the last position it heard from each engine; when a new engine takes over while it listens,
 * it reads back from that engine's first position or the last position announced before it,
 * whichever is lower (everything the new engine marked, and whatever the one before it marked
 * unannounced: the last positions the old engine announced are told again). Reads include their lower bound: one engine
 * may apply a position twice (at a clean stop, to record what it released). Left open: a node that
 * starts while a new engine is still below what the old one announced counts from the latest
 * position storage held, and does not see a gap among the new engine's positions below it.
 * Storage is the truth; an acknowledgement told twice is harmless to streams and waiters (they keep
 * the greatest id), one never told is not: streams get every user read back. Event-bus consumers are
 * promised one message per user and position, though, so they get only what this node was not told
 * already ({@link ReadBack#notTold}): a user at a position announced while a read was pending, or at
 * the last position announced before it, or read back by an earlier read, with the same id (a
 * statement that applied the same position again may have marked others, which are told). What is
 * remembered for that is bounded; forgetting it only lets a consumer hear something twice. Used on
 * the acknowledgement verticle's event loop.
 */
final class MissedAnnouncements {

  private static final Logger LOG = LoggerFactory.getLogger(MissedAnnouncements.class);
  private static final long RETRY_MS = 1_000;
  private static final int ATTEMPTS = 3;
  /** Engines remembered: one per term of leadership; older ones no longer announce. */
  private static final int ENGINES = 16;
  /** Users remembered as told, at most: past it, what was remembered is forgotten. */
  private static final int MAX_TOLD = 65_536;

  /**
   * The users storage recorded at a position, read back, and those of them that no announcement or
   * earlier read back told this node's consumers.
   */
  record ReadBack(String position, List<Reached> users, List<Reached> notTold) {
  }

  private final Vertx vertx;
  private final AcknowledgementHistory history;
  private final Consumer<ReadBack> recovered;
  /** The latest position heard of, or storage's latest processed one before that; null while unknown. */
  private String heard;
  /** The position of the last announcement heard, whichever engine made it; null before the first. */
  private String lastAnnounced;
  /** The latest position heard from each engine, the least recently heard first. */
  private final Map<String, String> heardFrom = new LinkedHashMap<>(ENGINES, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
      return size() > ENGINES;
    }
  };
  private Future<Void> reading = Future.succeededFuture();
  /** Reads queued or running. */
  private int pendingReads;
  /**
   * The users told at the last position announced, and at every position announced or read back
   * while a read is pending: what a read back may find again. At most {@link #MAX_TOLD} users. Kept
   * as the lists told, unhashed: this runs for every announcement, and only a read back (rare) looks.
   */
  private Map<String, List<List<Reached>>> told = new HashMap<>();
  private int toldUsers;

  /** {@code recovered}: told of each position read back, in replication order. */
  MissedAnnouncements(Vertx vertx, AcknowledgementHistory history, Consumer<ReadBack> recovered) {
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

  /** An announcement arrived from {@code engine} (null: a node of an older version did not say); not one read back here. */
  void heard(PositionReached reached, AnnouncingEngine engine) {
    if (heard != null) {
      String last = engine == null ? null : heardFrom.get(engine.id());
      if (last != null) {
        readBackGap(last, reached.previous());
      } else if (engine != null && !heardFrom.isEmpty()) {
        // A new engine took over while this node listened: everything it marked, and whatever the
        // engine before it marked unannounced, after the last it announced. (Not the latest position
        // heard: the engine before may itself have run below an older one's, and the new engine may
        // start above what it marked, since the follower confirms a position as it hands it over.)
        readBack(min(lastAnnounced, engine.firstPosition()), null);
      } else {
        // The engine that ran when this node started (what it marked before, the node's streams read
        // from storage), or one that does not say: counted from the latest position heard.
        readBackGap(heard, reached.previous());
      }
    }
    if (engine != null) {
      heardFrom.merge(engine.id(), reached.position(), MissedAnnouncements::max);
    }
    heard = heard == null ? reached.position() : max(heard, reached.position());
    lastAnnounced = reached.position();
    if (pendingReads == 0) {
      forgetTold();
    }
    remember(reached.position(), reached.reached());
  }

  private void remember(String position, List<Reached> users) {
    if (toldUsers + users.size() > MAX_TOLD) {
      forgetTold();
    }
    told.computeIfAbsent(position, p -> new ArrayList<>(1)).add(users);
    toldUsers += users.size();
  }

  private void forgetTold() {
    if (!told.isEmpty()) {
      told = new HashMap<>(); // not clear(): that walks the whole table a pending read may have grown
      toldUsers = 0;
    }
  }

  /** After {@code last}, the engine announced {@code previous}: read back what lies between, or everything after a statement that failed. */
  private void readBackGap(String last, String previous) {
    if (previous.isEmpty()) {
      readBack(last, null);
    } else if (previous.compareTo(last) > 0) {
      readBack(last, previous);
    }
  }

  private static String min(String a, String b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  private static String max(String a, String b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  /**
   * One read at a time, in the order the gaps were found. Each includes its lower bound, a position
   * heard already, so most find what was told before (an engine's first announcement at every start
   * asks for one): logged at DEBUG, a read at INFO only when it finds more than one position.
   */
  private void readBack(String from, String upTo) {
    LOG.debug("reading back acknowledgements processed from '{}' up to {}", from, upTo == null ? "now" : upTo);
    pendingReads++;
    reading = reading.transform(ignored -> read(from, upTo, ATTEMPTS)).andThen(done -> pendingReads--);
  }

  private List<Reached> notTold(String position, List<Reached> users) {
    List<List<Reached>> lists = told.get(position);
    if (lists == null) {
      return users;
    }
    Set<Reached> announced = new HashSet<>();
    lists.forEach(announced::addAll);
    return users.stream().filter(user -> !announced.contains(user)).toList();
  }

  private Future<Void> read(String from, String upTo, int attempts) {
    return history.processedFrom(from, upTo).map(byPosition -> {
      if (byPosition.size() > 1) {
        LOG.info("read back the acknowledgements of {} position(s) from '{}' that this node may have missed{}",
            byPosition.size(), from, upTo == null
                ? " (an engine started, or a statement's answer was lost)" : " (up to " + upTo + ")");
      }
      // Passed on even when every user was told: the position itself ends waits for heads before it.
      byPosition.forEach((position, users) -> {
        List<Reached> notTold = notTold(position, users);
        remember(position, notTold);
        recovered.accept(new ReadBack(position, users, notTold));
      });
      return (Void) null;
    }).recover(e -> {
      if (attempts <= 1) {
        LOG.warn("could not read back the acknowledgements from {}: {}; streams of this node may miss them until the"
            + " next acknowledgement of their user", from, e.getMessage());
        return Future.succeededFuture();
      }
      return vertx.timer(RETRY_MS).compose(id -> read(from, upTo, attempts - 1));
    });
  }
}
