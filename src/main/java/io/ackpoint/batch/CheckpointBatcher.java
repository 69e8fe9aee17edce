package io.ackpoint.batch;

import io.ackpoint.AckpointError;
import io.ackpoint.AckpointException;
import io.ackpoint.config.AckpointConfig.BatchingConfig;
import io.ackpoint.core.CheckpointCommand;
import io.ackpoint.core.CheckpointCreated;
import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.HeadedBatch;
import io.ackpoint.core.PendingCheckpoints;
import io.ackpoint.core.WriteOutcome;
import io.ackpoint.source.ReplicationSource;
import io.ackpoint.storage.CheckpointWriter;
import io.ackpoint.storage.HeadStoringWriter;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.ContextInternal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Groups checkpoint commands into batches: per batch one head read, one storage write and at most
 * one marker (one round trip in all when source and storage are one PostgreSQL database). All methods run on the batcher's event loop, so no state here needs a lock.
 *
 * <p>What waits is bounded: at most {@code max_pending} commands wait for a batch (beyond that a
 * command fails at once, 503), a command still waiting when its caller's time is up is dropped
 * unseen by storage, and a batch that outlives every caller's time fails instead of holding one of
 * the in-flight slots.
 */
public final class CheckpointBatcher {

  private final ContextInternal context;
  private final BatchWriter writer;
  private final BatchListener listener;
  private final BatchingConfig config;
  private final long requestTimeoutNanos;
  private final long minIntervalNanos;
  private final LongSupplier nanoClock;

  private SourceRewinds rewinds = new SourceRewinds(ignored -> {
  }, null);
  private List<Waiting> pending = new ArrayList<>();
  private int inFlight;
  private boolean dispatchScheduled;
  /** When the last batch started ({@link #nanoClock}); read only after a batch that coalesced. */
  private long lastStartNanos;
  /** Whether the last batch wrote at most one row per two of its commands (its users sent several each). */
  private boolean lastCoalesced;
  private Promise<Void> drained;

  /** Head, rows and marker in separate steps: any source with any storage. */
  public CheckpointBatcher(Context context, ReplicationSource source, CheckpointWriter storage,
                           BatchingConfig config, BatchListener listener) {
    this(context, new SeparateSteps(source, storage, listener), config, listener, System::nanoTime);
  }

  /** Head, rows and marker in one round trip: source and storage are one PostgreSQL database. */
  public CheckpointBatcher(Context context, HeadStoringWriter storage, BatchingConfig config, BatchListener listener) {
    this(context, new OneRoundTrip(storage, listener), config, listener, System::nanoTime);
  }

  CheckpointBatcher(Context context, ReplicationSource source, CheckpointWriter storage,
                    BatchingConfig config, BatchListener listener, LongSupplier nanoClock) {
    this(context, new SeparateSteps(source, storage, listener), config, listener, nanoClock);
  }

  private CheckpointBatcher(Context context, BatchWriter writer, BatchingConfig config, BatchListener listener,
                            LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
    this.context = (ContextInternal) context;
    this.writer = writer;
    this.config = config;
    this.requestTimeoutNanos = config.requestTimeout().toNanos();
    this.minIntervalNanos = config.minInterval().toNanos();
    this.listener = listener;
  }

  /**
   * Where each stored batch's pending checkpoints go, with their heads, before its callers are
   * answered (the acknowledgement engine, which releases them as soon as replication passes), and
   * where a head is told at which the source was found to have gone back ({@link SourceRewinds};
   * null for a source whose heads are not ordered).
   */
  public void releaseTo(Consumer<PendingCheckpoints> released, Function<String, Future<?>> rewound) {
    this.rewinds = new SourceRewinds(released, rewound);
  }

  /**
   * Submits commands that are answered together (an HTTP event loop's commands of one turn): all of
   * them wait for a batch, or, when they would take more than {@code max_pending} places, none does
   * and all fail at once (503). So a refusal is never held back by the batch of the commands beside
   * it. Must be called on the batcher's context.
   */
  public List<Future<CheckpointCreated>> submitAll(List<CheckpointCommand> commands) {
    List<Future<CheckpointCreated>> created = new ArrayList<>(commands.size());
    boolean refused = config.enabled() && pending.size() + commands.size() > config.maxPending();
    for (CheckpointCommand command : commands) {
      created.add(refused ? Future.failedFuture(AckpointError.BATCHER_OVERLOADED.exception()) : submit(command));
    }
    return created;
  }

  /** Must be called on the batcher's context. */
  public Future<CheckpointCreated> submit(CheckpointCommand command) {
    Promise<CheckpointCreated> promise = context.promise();
    Waiting waiting = new Waiting(command, promise, nanoClock.getAsLong() + requestTimeoutNanos);
    if (!config.enabled()) {
      // The no-batching baseline: every request is its own batch, as many at once as the pools serve.
      run(List.of(waiting));
      return promise.future();
    }
    if (pending.size() >= config.maxPending()) {
      promise.fail(AckpointError.BATCHER_OVERLOADED.exception());
      return promise.future();
    }
    pending.add(waiting);
    scheduleDispatch();
    return promise.future();
  }

  /** Completes once no batch is running and none is waiting: used by a graceful shutdown. */
  public Future<Void> drained() {
    if (inFlight == 0 && pending.isEmpty()) {
      return Future.succeededFuture();
    }
    if (drained == null) {
      drained = context.promise();
    }
    return drained.future();
  }

  public int inFlight() {
    return inFlight;
  }

  public int pending() {
    return pending.size();
  }

  private void scheduleDispatch() {
    if (dispatchScheduled || inFlight >= config.maxInFlightBatches() || pending.isEmpty()) {
      return;
    }
    dispatchScheduled = true;
    // A timer, not runOnContext: Netty moves due timers into the task queue only at the start of its
    // next task pass, after the next I/O poll. Every command delivered in this loop turn (say, the
    // hundreds an HTTP queue releases at once) is therefore in the batch, which a task queued behind
    // the current one would cut short. Zero-delay but within min_interval of the start of a last
    // batch that coalesced: its users send several commands each, so the meantime's commands join
    // the next one mostly as rows it writes anyway, and share its statement, commit and marker. A
    // batch of as many rows as commands would gain little but the wait.
    long wait = lastCoalesced ? Math.max(0, minIntervalNanos - (nanoClock.getAsLong() - lastStartNanos)) : 0;
    context.nettyEventLoop().schedule(() -> context.emit(v -> dispatch()), wait, TimeUnit.NANOSECONDS);
  }

  private void dispatch() {
    dispatchScheduled = false;
    if (pending.isEmpty() || inFlight >= config.maxInFlightBatches()) {
      return;
    }
    List<Waiting> batch = new ArrayList<>(pending.size());
    long now = nanoClock.getAsLong();
    for (Waiting w : pending) {
      if (now - w.deadlineNanos >= 0) {
        // Its caller has stopped waiting (the event-bus request timed out): storage never sees it.
        w.promise.fail(AckpointError.BATCHER_TIMEOUT.exception());
      } else {
        batch.add(w);
      }
    }
    pending = new ArrayList<>();
    if (batch.isEmpty()) {
      signalDrained();
      return;
    }
    run(batch);
  }

  private void run(List<Waiting> batch) {
    inFlight++;
    lastStartNanos = nanoClock.getAsLong();
    Map<FullUserId, Group> groups = collapse(batch);
    List<CheckpointWrite> writes = new ArrayList<>(groups.size());
    for (Group g : groups.values()) {
      writes.add(g.write());
    }
    lastCoalesced = batch.size() >= 2 * writes.size();
    listener.batchStarted(batch.size(), writes.size());
    long started = System.nanoTime();
    String floor = rewinds.floor();
    writer.write(writes)
        // No caller of the batch waits longer than this; its in-flight slot is worth more to the next batch.
        .timeout(requestTimeoutNanos, TimeUnit.NANOSECONDS)
        .onComplete(ar -> {
          inFlight--;
          listener.batchFinished(System.nanoTime() - started, ar.succeeded());
          if (ar.succeeded()) {
            rewinds.stored(floor, ar.result().head(), PendingCheckpoints.of(ar.result().stored(), System.nanoTime()));
            complete(groups, ar.result());
          } else {
            // Never retried here: the clients retry, and a retry that matches a pending row forces the marker again.
            AckpointException error = ar.cause() instanceof TimeoutException
                ? AckpointError.STORAGE_TIMEOUT.exception()
                : AckpointException.of(ar.cause());
            for (Waiting w : batch) {
              w.promise.fail(error);
            }
          }
          scheduleDispatch();
          signalDrained();
        });
  }

  private void signalDrained() {
    if (drained != null && inFlight == 0 && pending.isEmpty()) {
      drained.complete();
      drained = null;
    }
  }

  /** Each user's requests get their own outcome: one user's state never fails another's request. */
  private static void complete(Map<FullUserId, Group> groups, HeadedBatch batch) {
    for (Map.Entry<FullUserId, Group> e : groups.entrySet()) {
      WriteOutcome outcome = batch.stored().outcomes().get(e.getKey());
      Group g = e.getValue();
      if (outcome instanceof WriteOutcome.Stored stored) {
        g.generated.forEach(p -> p.complete(new CheckpointCreated(stored.generated(), batch.head(), stored.pending())));
        g.supplied.forEach(p -> p.complete(new CheckpointCreated(stored.checkpoint(), batch.head(), stored.pending())));
      } else if (outcome instanceof WriteOutcome.Exhausted exhausted) {
        g.generated.forEach(p -> p.fail(AckpointError.CHECKPOINT_EXHAUSTED.exception()));
        g.supplied.forEach(p -> p.complete(new CheckpointCreated(exhausted.checkpoint(), batch.head(), exhausted.pending())));
      } else if (outcome instanceof WriteOutcome.Contended) {
        g.failAll(AckpointError.STORAGE_CONTENTION.exception());
      } else if (outcome instanceof WriteOutcome.Rejected rejected) {
        g.failAll(AckpointError.CHECKPOINT_UNSTORABLE.exception(
            AckpointError.CHECKPOINT_UNSTORABLE.description() + ": " + rejected.reason()));
      } else {
        g.failAll(AckpointError.INTERNAL.exception("storage returned no outcome for a user of the batch"));
      }
    }
  }

  /**
   * One write per full user id. The collapse rule, which storage applies as the serial order
   * "generated, then supplied": all generated requests of a user share one new id (they are
   * equivalent), of the supplied ids the greatest stands for all (a lower one would be answered the
   * greater stored id anyway), and the two kinds never change each other's answer beyond what that
   * order gives. In particular a generated request always gets a new id, stored with this batch's
   * head, even when a stale supplied id of the same user is in the batch.
   */
  static Map<FullUserId, Group> collapse(List<Waiting> batch) {
    Map<FullUserId, Group> groups = new LinkedHashMap<>();
    for (Waiting w : batch) {
      groups.computeIfAbsent(w.command.user(), Group::new).add(w);
    }
    return groups;
  }

  record Waiting(CheckpointCommand command, Promise<CheckpointCreated> promise, long deadlineNanos) {
  }

  static final class Group {
    final FullUserId user;
    final List<Promise<CheckpointCreated>> generated = new ArrayList<>(1);
    final List<Promise<CheckpointCreated>> supplied = new ArrayList<>(1);
    Long greatestSupplied;

    Group(FullUserId user) {
      this.user = user;
    }

    void add(Waiting w) {
      Long id = w.command.requestedId();
      if (id == null) {
        generated.add(w.promise);
      } else {
        supplied.add(w.promise);
        if (greatestSupplied == null || id > greatestSupplied) {
          greatestSupplied = id;
        }
      }
    }

    CheckpointWrite write() {
      return new CheckpointWrite(user, !generated.isEmpty(), greatestSupplied);
    }

    void failAll(AckpointException error) {
      generated.forEach(p -> p.fail(error));
      supplied.forEach(p -> p.fail(error));
    }
  }
}
