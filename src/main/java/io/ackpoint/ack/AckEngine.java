package io.ackpoint.ack;

import io.ackpoint.core.CustomCheckpoint;
import io.ackpoint.core.GreatestIds;
import io.ackpoint.core.LocalCodec;
import io.ackpoint.core.PendingCheckpoints;
import io.ackpoint.core.PositionFormat;
import io.ackpoint.core.PositionReached;
import io.ackpoint.core.Reached;
import io.ackpoint.storage.CheckpointStorage;
import io.ackpoint.storage.SourceBehindException;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.internal.ContextInternal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Turns observed replication positions into acknowledgements: marks the pending checkpoints at or
 * before the position as processed (one statement) and publishes one {@link PositionReached} with
 * every user it acknowledged. Runs on one event loop, of the node that follows replication.
 * Positions that arrive while a statement runs, or less than {@link #SPACING_MS} after it began, are
 * coalesced: only the greatest is applied next, which acknowledges everything the smaller ones
 * would have. A new engine starts with every term
 * of leadership; its first announcement names no previous one, which tells every node to read back
 * from storage what the engine before it may have applied without announcing (it died in between).
 * Its first announcement after a failed statement names none either: that statement may have
 * committed, its answer lost.
 *
 * <p>The checkpoints of the batches of every node are released sooner: their users are told as soon
 * as a position passes their heads, in a message marked {@link PositionReached#RELEASE_HEADER}, while
 * the statement that records them runs or waits its turn ({@link EarlyReleases} says why that is
 * safe). The statement's announcement follows as for every position, and tells the event-bus
 * consumers; both name the statement ({@link StatementNumber}).
 */
public final class AckEngine {

  private static final Logger LOG = LoggerFactory.getLogger(AckEngine.class);
  private static final long RETRY_MS = 1_000;
  /** How long a release waits for a position to start the statement that records it (see {@link #recordSoon}). */
  private static final long RECORD_MS = 20;
  /**
   * The least time from one statement's start to the next one's when a position starts it (see
   * {@link #applySoon}); a release's own statement, a clean stop and a retry do not wait for it.
   */
  static final long SPACING_MS = 5;

  private final Vertx vertx;
  private final CheckpointStorage storage;
  private final AckListener listener;
  private final String reachedAddress;
  private final String heardAddress;
  private final DeliveryOptions toEventLoops;
  private final String origin;
  private final Checkpoints checkpoints;
  private final long recordMs;
  private final long spacingNanos;
  private final EarlyReleases releases = new EarlyReleases();
  private final String engineId = UUID.randomUUID().toString();
  /** Statements started so far: each is numbered ({@link StatementNumber}). */
  private long statements;
  /** The statement that records what was released last; a clean stop waits for it. */
  private long recordedBy;
  private String observed = "";
  /** When the statement that applied {@link #observed} began ({@link System#nanoTime()}). */
  private long observedStatementStarted;
  /** When the last statement began ({@link System#nanoTime()}). */
  private long statementStarted;
  /** Whether an {@link #applySoon} timer is set: one at a time. */
  private boolean spacingTimerSet;
  private String latest = "";
  /** The checkpoint sequence of {@link #latest}: a position keeps its number from observation to announcement. */
  private long latestCheckpoint;
  /** The position announced last, "" before the first: each announcement names the one before it. */
  private String announced = "";
  /** The position of the engine's first statement, null before it: every announcement carries it ({@link AnnouncingEngine}). */
  private String firstPosition;
  private boolean applying;
  /** Whether a {@link #recordSoon} timer is set: one at a time. */
  private boolean recordTimerSet;
  /** Set by {@link #stop()}; completes once no statement runs, and none starts after. */
  private Promise<Void> stopping;
  private Future<Void> customStores = Future.succeededFuture();
  private boolean abandoned;
  /** Completes once the statement an abandoned engine was running has ended; null while none is awaited. */
  private Promise<Void> idle;
  /** Told the source's head when a statement finds that the source went back ({@link SourceBehindException}). */
  private Consumer<String> sourceBehind = head -> {
  };

  /**
   * {@code reachedAddress}: where each applied position is published, to every node's
   * acknowledgement verticle; {@code heardAddress}: where it is published to this node's event loops.
   */
  public AckEngine(Vertx vertx, CheckpointStorage storage, PositionFormat positions, String reachedAddress,
                   String heardAddress, AckListener listener) {
    this(vertx, storage, positions, reachedAddress, heardAddress, listener, RECORD_MS, SPACING_MS);
  }

  /**
   * {@code recordMs}: how long a release waits for a position before it starts its own statement;
   * {@code spacingMs}: the least time from one statement's start to the next one's.
   */
  AckEngine(Vertx vertx, CheckpointStorage storage, PositionFormat positions, String reachedAddress,
            String heardAddress, AckListener listener, long recordMs, long spacingMs) {
    this.recordMs = recordMs;
    this.spacingNanos = TimeUnit.MILLISECONDS.toNanos(spacingMs);
    this.statementStarted = System.nanoTime() - spacingNanos;
    this.vertx = vertx;
    this.storage = storage;
    this.checkpoints = new Checkpoints(positions);
    this.reachedAddress = reachedAddress;
    this.heardAddress = heardAddress;
    this.toEventLoops = LocalCodec.register(vertx, PositionReached.class);
    this.origin = NodeOrigin.of(vertx);
    this.listener = listener;
  }

  /**
   * The storage the engine uses is about to close. Nothing is released from now on; the statement
   * running ends first, and so does the one for a position observed before it ended (or waiting for
   * the spacing after the last), and the one
   * that records the last release: what streams were told is recorded before a clean stop. No statement
   * starts once this has completed, and a failed one is not retried: the next engine applies its
   * position again.
   */
  Future<Void> stop() {
    if (stopping == null) {
      // On the engine's context, as everything that completes it.
      stopping = ((ContextInternal) vertx.getOrCreateContext()).promise();
      if (!applying && (recordedBy > statements || latest.compareTo(observed) > 0)) {
        apply();
      } else if (!applying) {
        stopping.complete();
      }
    }
    return stopping.future();
  }

  /**
   * Ends this engine without a last statement: the source went back, and a statement at its latest
   * position would mark the new source's checkpoints as processed, their heads being before it. A
   * statement running goes on (and announces what it marked); none starts after it, not even a retry.
   */
  Future<Void> abandon() {
    abandoned = true;
    if (!applying) {
      return Future.succeededFuture();
    }
    idle = Promise.promise();
    return idle.future();
  }

  /** Where a head goes at which a statement found that the source went back. */
  void onSourceBehind(Consumer<String> sourceBehind) {
    this.sourceBehind = sourceBehind;
  }

  private boolean stopped() {
    return abandoned || stopping != null && stopping.future().isComplete();
  }

  /** Whether this engine applied (observed) a position after {@code head}. */
  boolean appliedBeyond(String head) {
    return latest.compareTo(head) > 0;
  }

  public void observe(String position) {
    if (position.compareTo(latest) <= 0) {
      return;
    }
    latest = position;
    latestCheckpoint = checkpoints.next(position);
    release(releases.passedBy(position));
    if (!applying && stopping == null) {
      applySoon();
    }
  }

  /**
   * Checkpoints a batch of any node stored, with the heads they wait for: released at once if the
   * latest position passed their head already, else kept for the position that does. Not released
   * when announced already: a statement begun after the batch's answer (so after its commit; from
   * another node, after its arrival here, see {@code PendingCheckpointsCodec}) saw its
   * rows, and applied a position at or past the head: a release would tell nobody anything new, at
   * the cost of a message to every event loop of every node.
   */
  public void pending(PendingCheckpoints stored) {
    boolean seenByLastStatement = observedStatementStarted - stored.storedNanos() > 0;
    GreatestIds passed = new GreatestIds();
    for (PendingCheckpoints.Pending p : stored.checkpoints()) {
      if (seenByLastStatement && p.head().compareTo(observed) <= 0) {
        continue;
      }
      if (!latest.isEmpty() && p.head().compareTo(latest) <= 0) {
        passed.add(p.user(), p.checkpoint());
      } else if (!releases.keep(p)) {
        LOG.debug("{} checkpoints wait for replication: {} is left to its acknowledgement", EarlyReleases.LIMIT, p.user());
      }
    }
    release(passed.reached());
  }

  /**
   * Tells every node's streams of {@code users} now, naming the statement that will record them:
   * the next to start, at the latest position or a later one, which sees their batches (committed,
   * since the engine has their answers). It starts with the next position (under load the next
   * batch's marker; {@link #SPACING_MS} after the statement before at the latest), after
   * {@link #RECORD_MS} if none came (see {@link #recordSoon}), or at a clean
   * stop: starting one at once for each release that comes while a statement runs cost a third more
   * commits under load.
   */
  private void release(List<Reached> users) {
    if (users.isEmpty() || stopping != null) {
      return;
    }
    recordedBy = statements + 1;
    recordSoon();
    // Named after the last announcement, as the next one will be: a node of an older version, which
    // takes this for an announcement, then sees no gap to read back from storage.
    announce(new PositionReached(latest, latestCheckpoint, users, announced),
        MultiMap.caseInsensitiveMultiMap().add(PositionReached.RELEASE_HEADER, "true")
            .add(StatementNumber.HEADER, new StatementNumber(engineId, recordedBy).header()));
  }

  /**
   * Starts the statement that records the last release at the latest position if none has started
   * {@link #RECORD_MS} from now (and none runs then: one that ends without a later position to apply
   * comes back here). A release may follow the statement for its position without a later one to come: a
   * batch's marker committed with its rows (see HeadStoringWriter) can reach the follower a moment
   * before the rows are visible, and its statement then misses them. Its
   * checkpoints are released when the batch's answer comes, but event-bus consumers hear only what
   * a statement records, and on an idle database the next position is the follower's heartbeat,
   * seconds away. Under load the next batch's marker comes first and the timer finds nothing to do.
   */
  private void recordSoon() {
    if (recordTimerSet || stopping != null) {
      return;
    }
    recordTimerSet = true;
    vertx.setTimer(recordMs, id -> {
      recordTimerSet = false;
      if (!applying && stopping == null && recordedBy > statements) {
        apply();
      }
    });
  }

  /**
   * To every node's acknowledgement verticle, and to this node's event loops directly: the
   * acknowledgement verticle passes on to them only what another node's engine announced, since
   * its own event loop also serves requests, and a position that waited behind them there reached
   * streams later (acknowledgement latency under load, 256 connections, 11 rounds alternated: p99
   * 8.0–27.5 ms, above 12 ms in 7 rounds, against 8.3–11.8 ms when told directly). The
   * acknowledgement verticle's copy is published first: a stream that opens in between asks that
   * verticle for its user's latest acknowledgement, which must then know of this position as soon
   * as the stream's event loop can. So in a cluster this node's verticle has a copy of its own,
   * local-only: a publish to the cluster waits for its registry to say which nodes serve the address
   * (on a worker, the first time this node publishes there), and the event loops' copy overtook it;
   * the verticle ignores this node's copy from the cluster.
   */
  private void announce(PositionReached reached, MultiMap headers) {
    headers.add(NodeOrigin.HEADER, origin);
    EventBus bus = vertx.eventBus();
    if (vertx.isClustered()) {
      bus.publish(reachedAddress, reached, new DeliveryOptions().setLocalOnly(true).setHeaders(headers));
      bus.publish(reachedAddress, reached, new DeliveryOptions()
          .setHeaders(MultiMap.caseInsensitiveMultiMap().addAll(headers).add(NodeOrigin.FOR_OTHER_NODES, "true")));
    } else {
      bus.publish(reachedAddress, reached, new DeliveryOptions().setHeaders(headers));
    }
    bus.publish(heardAddress, reached, toEventLoops);
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

  /**
   * Applies the latest position now, or once {@link #SPACING_MS} have passed since the last statement
   * began. Under load a position comes with every batch's commit, and a statement for each cost
   * PostgreSQL a commit and an executor start-up per batch (with one user, where each batch is a
   * row, spacing them cut its CPU per request by a quarter to a half); spaced, one statement
   * records the positions of several batches, and their rows once each. Streams of the batches of
   * every node do not wait for it: they are told as soon as a position passes their heads ({@link
   * EarlyReleases}). What waits, by about the spacing at most (a timer of whole milliseconds), is
   * what only a statement tells: event-bus consumers, the legacy route's waits, the users of
   * custom checkpoints, and of checkpoints beyond {@link EarlyReleases#LIMIT}. A position after a
   * quiet spell is applied at once.
   */
  private void applySoon() {
    long wait = spacingNanos - (System.nanoTime() - statementStarted);
    if (wait <= 0) {
      apply();
    } else if (!spacingTimerSet) {
      spacingTimerSet = true;
      vertx.setTimer(Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait + 999_999)), id -> {
        spacingTimerSet = false;
        if (!applying && stopping == null && latest.compareTo(observed) > 0) {
          apply();
        }
      });
    }
  }

  private void apply() {
    if (stopped()) {
      // A retry that an abandoned engine waited for: no statement runs any more.
      if (idle != null) {
        idle.tryComplete();
      }
      return;
    }
    applying = true;
    statementStarted = System.nanoTime();
    StatementNumber number = new StatementNumber(engineId, ++statements);
    String target = latest;
    if (firstPosition == null) {
      firstPosition = target;
    }
    long targetCheckpoint = latestCheckpoint;
    long started = statementStarted;
    customStores.transform(ignored -> storage.markProcessed(target)).onComplete(ar -> {
      if (ar.failed() && abandoned) {
        LOG.debug("replication position {} not applied by an engine replaced meanwhile: {}", target, ar.cause().getMessage());
        applying = false;
        idle.tryComplete();
        return;
      }
      if (ar.failed()) {
        if (stopping != null) {
          // The next engine applies the position again.
          LOG.debug("replication position {} not applied before the stop: {}", target, ar.cause().getMessage());
          applying = false;
          stopping.tryComplete();
          return;
        }
        // The same position (or a later one) is applied again shortly. The statement may have
        // committed and only its answer been lost (the connection cut after the commit, a server
        // crash): the users it marked are no longer pending, so no later statement returns them. The
        // next announcement then names no previous one, so that every node reads back what was
        // processed from the last announcement of this engine it heard (a scan of storage: not after
        // a refusal).
        if (storage.mayHaveMarked(ar.cause())) {
          announced = "";
        }
        LOG.warn("could not apply replication position {}: {}", target, ar.cause().getMessage());
        vertx.setTimer(RETRY_MS, id -> apply());
        for (Throwable cause = ar.cause(); cause != null; cause = cause.getCause()) {
          if (cause instanceof SourceBehindException behind) {
            sourceBehind.accept(behind.head());
            break;
          }
        }
        return;
      }
      try {
        observed = target;
        observedStatementStarted = started;
        listener.positionApplied(target, System.nanoTime() - started, ar.result().size());
        // One message for all the users of the position, also when there are none: the nodes' head
        // waiters and checkpoint sequences move with every position.
        announce(new PositionReached(target, targetCheckpoint, ar.result(), announced),
            MultiMap.caseInsensitiveMultiMap().add(StatementNumber.HEADER, number.header())
                .add(AnnouncingEngine.FIRST_POSITION_HEADER, firstPosition));
        announced = target;
      } catch (RuntimeException e) {
        // The rows are marked; whatever went wrong telling about them must not stop later positions,
        // and the next announcement has every node read them back.
        announced = "";
        LOG.error("could not publish the acknowledgements of position {}", target, e);
      }
      applying = false;
      if (abandoned) {
        idle.tryComplete();
        return;
      }
      if (stopping != null && (latest.compareTo(observed) > 0 || recordedBy > statements)) {
        apply();
      } else if (latest.compareTo(observed) > 0) {
        applySoon();
      } else if (stopping != null) {
        stopping.tryComplete();
      } else if (recordedBy > statements) {
        recordSoon();
      }
    });
  }
}
