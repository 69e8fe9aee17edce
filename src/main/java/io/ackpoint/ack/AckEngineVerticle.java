package io.ackpoint.ack;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.AckpointException;
import io.ackpoint.core.CustomCheckpoints;
import io.ackpoint.core.PendingCheckpoints;
import io.ackpoint.core.PositionFormat;
import io.ackpoint.storage.CheckpointStorage;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The acknowledgement engine ({@link AckEngine}) on the event bus: applies the positions observed
 * on this node ({@code positionObserved}: the follower's, and validated external progress) and
 * stores the follower's custom checkpoints, replying once they are durable. It runs where the
 * follower runs, one per cluster, so that one engine applies each position; a new one starts with
 * every term of leadership.
 */
public final class AckEngineVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(AckEngineVerticle.class);

  private static final long STOP_WAIT_MS = 5_000;

  private final CheckpointStorage storage;
  private final PositionFormat positions;
  private final AckListener listener;
  private final AckpointAddresses addresses;
  private AckEngine engine;
  /** The statements engines replaced after a rewind were still running: a stop waits for them too. */
  private final List<Future<Void>> replaced = new ArrayList<>();
  /** The head of the source that went back, for which the running engine was started; "" for one started with the verticle. */
  private String startedAt = "";
  private long startedNanos;
  /**
   * How long after a rewind a batch may still report it: a batch runs at most
   * {@code batching.request_timeout} (30 s by default), and a report waits at most 10 s for its
   * answer before the next batch asks again. A report later than that (a longer request timeout)
   * starts one engine more, which costs a read-back, not an acknowledgement.
   */
  private static final long TOLD_AGAIN_NANOS = TimeUnit.MINUTES.toNanos(1);

  public AckEngineVerticle(CheckpointStorage storage, PositionFormat positions, AckListener listener,
                           AckpointAddresses addresses) {
    this.storage = storage;
    this.positions = positions;
    this.listener = listener;
    this.addresses = addresses;
  }

  @Override
  public Future<?> start() {
    engine = newEngine();
    var bus = vertx.eventBus();
    return Future.all(
        bus.<String>consumer(addresses.sourceRewound(), msg -> {
          rewound(msg.body(), !msg.headers().contains(AckpointAddresses.HEAD_READ_AT_OPEN));
          msg.reply(null);
        }).completion(),
        bus.<String>localConsumer(addresses.positionObserved(), msg -> engine.observe(msg.body())).completion(),
        bus.<PendingCheckpoints>consumer(addresses.pendingCheckpoints(), msg -> engine.pending(msg.body())).completion(),
        bus.<JsonObject>localConsumer(addresses.customCheckpoints(), msg -> AckpointException.reply(msg,
            engine.custom(msg.body().getString("position"), CustomCheckpoints.checkpoints(msg.body())))).completion());
  }

  private AckEngine newEngine() {
    AckEngine started = new AckEngine(vertx, storage, positions, addresses.positionReached(), addresses.positionHeard(), listener);
    // Its own statement may be the first to find it: where storage is the source, a position beyond
    // the database's head is refused. Read by the statement itself, that head is no report of an
    // earlier read; an engine already replaced reports nothing.
    started.onSourceBehind(head -> {
      if (engine == started) {
        rewound(head, false);
      }
    });
    return started;
  }

  /**
   * A head read after the positions this engine applied: by a batcher that found that the source
   * went back to it (see {@code SourceRewinds}), by the follower as it opened its stream, or by the
   * engine's own statement (see {@code SourceBehindException}). If this
   * engine applied a position beyond it, the source went back, and a new engine takes over, as at a
   * new term of leadership: it releases nothing before a position of the new source passes its
   * head, and every node reads back from storage what it may have missed. The old one starts no
   * statement after the one it may be running: at its latest position, that would mark the new
   * source's checkpoints as passed.
   *
   * <p>{@code mayBeOld}: the head may have been read a while ago, by a batch that began before its
   * node knew of a rewind (each node's batcher finds the same one); the follower's head, read as it
   * opens its stream and sent ahead of the stream's positions, and a statement's are read now.
   */
  private void rewound(String head, boolean mayBeOld) {
    // A batch's head at or after the one this engine was started for, within the time a batch may
    // run and its report wait, was read on the new source: the same rewind told again, however far
    // this engine has gone since. A second rewind to such a head within that time cannot be told
    // apart from it (see README).
    boolean toldAgain = mayBeOld && !startedAt.isEmpty() && head.compareTo(startedAt) >= 0
        && System.nanoTime() - startedNanos < TOLD_AGAIN_NANOS;
    if (!toldAgain && engine.appliedBeyond(head)) {
      LOG.warn("the source went back to {}, before positions the acknowledgement engine applied: a new engine starts", head);
      AckEngine old = engine;
      engine = newEngine();
      startedAt = head;
      startedNanos = System.nanoTime();
      replaced.removeIf(Future::isComplete);
      replaced.add(old.abandon());
    }
  }

  /**
   * Waits for the engine's last statements (see {@link AckEngine#stop()}), at most
   * {@link #STOP_WAIT_MS}: a database that does not answer must not hold up the shutdown; the pools
   * then close under the statement, as they did before the engine waited.
   */
  @Override
  public Future<?> stop() {
    // Also the replaced engines' statements, so that none meets the pools closing under it.
    List<Future<Void>> ending = new ArrayList<>(replaced);
    ending.add(engine.stop());
    return Future.join(ending).timeout(STOP_WAIT_MS, TimeUnit.MILLISECONDS).otherwiseEmpty();
  }
}
