package io.ackpoint.batch;

import io.ackpoint.AckpointException;
import io.ackpoint.source.MarkerDecision;
import io.ackpoint.source.ReplicationSource;
import io.ackpoint.storage.CheckpointWriter;
import io.ackpoint.storage.CheckpointWrite;
import io.ackpoint.storage.StoredBatch;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.ContextInternal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Groups checkpoint commands into batches: per batch one head read, one storage write and at most
 * one marker. All methods run on the batcher's event loop, so no state here needs a lock.
 */
public final class CheckpointBatcher {

  private final ContextInternal context;
  private final ReplicationSource source;
  private final CheckpointWriter storage;
  private final BatchListener listener;
  private final int maxInFlight;
  private final boolean batching;

  private List<Waiting> pending = new ArrayList<>();
  private int inFlight;
  private boolean dispatchScheduled;
  private Promise<Void> drained;

  public CheckpointBatcher(Context context, ReplicationSource source, CheckpointWriter storage,
                           int maxInFlight, boolean batching, BatchListener listener) {
    this.context = (ContextInternal) context;
    this.source = source;
    this.storage = storage;
    this.maxInFlight = maxInFlight;
    this.batching = batching;
    this.listener = listener;
  }

  /** Must be called on the batcher's context. */
  public Future<CheckpointCreated> submit(CheckpointCommand command) {
    Promise<CheckpointCreated> promise = context.promise();
    if (!batching) {
      // The no-batching baseline: every request is its own batch, bounded only by the pools.
      run(List.of(new Waiting(command, promise)));
      return promise.future();
    }
    pending.add(new Waiting(command, promise));
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
    if (dispatchScheduled || inFlight >= maxInFlight || pending.isEmpty()) {
      return;
    }
    dispatchScheduled = true;
    // A zero-delay timer, not runOnContext: Netty moves due timers into the task queue only at the
    // start of its next task pass, after the next I/O poll. Every command delivered in this loop
    // turn (say, the hundreds an HTTP queue releases at once) is therefore in the batch, which a
    // task queued behind the current one would cut short.
    context.nettyEventLoop().schedule(() -> context.emit(v -> dispatch()), 0, TimeUnit.NANOSECONDS);
  }

  private void dispatch() {
    dispatchScheduled = false;
    if (pending.isEmpty() || inFlight >= maxInFlight) {
      return;
    }
    List<Waiting> batch = pending;
    pending = new ArrayList<>();
    run(batch);
  }

  private void run(List<Waiting> batch) {
    inFlight++;
    Map<String, Group> groups = collapse(batch);
    List<CheckpointWrite> writes = new ArrayList<>(groups.size());
    for (Map.Entry<String, Group> e : groups.entrySet()) {
      writes.add(new CheckpointWrite(e.getKey(), e.getValue().requestedId));
    }
    listener.batchStarted(batch.size(), writes.size());
    long started = System.nanoTime();
    source.createReplicationHead(head -> storage.store(head, writes).map(stored -> new HeadedBatch(head, stored)))
        .onComplete(ar -> {
          inFlight--;
          listener.batchFinished(System.nanoTime() - started, ar.succeeded());
          if (ar.succeeded()) {
            complete(groups, ar.result());
          } else {
            // Never retried here: the clients retry, and a retry that matches a pending row forces the marker again.
            AckpointException error = AckpointException.from(ar.cause());
            for (Waiting w : batch) {
              w.promise.fail(error);
            }
          }
          scheduleDispatch();
          if (drained != null && inFlight == 0 && pending.isEmpty()) {
            drained.complete();
            drained = null;
          }
        });
  }

  private static void complete(Map<String, Group> groups, HeadedBatch outcome) {
    for (Map.Entry<String, Group> e : groups.entrySet()) {
      Long id = outcome.stored.checkpoints().get(e.getKey());
      for (Promise<CheckpointCreated> p : e.getValue().promises) {
        if (id == null) {
          p.fail(new AckpointException(500, "ACK_INTERNAL", "storage returned no checkpoint for a user of the batch"));
        } else {
          p.complete(new CheckpointCreated(id, outcome.head));
        }
      }
    }
  }

  /**
   * One write per full user id: generated commands are equivalent, of supplied ids the greatest
   * wins, and a supplied id wins over generated ones (it already moves the user's checkpoint).
   */
  static Map<String, Group> collapse(List<Waiting> batch) {
    Map<String, Group> groups = new LinkedHashMap<>();
    for (Waiting w : batch) {
      Group g = groups.computeIfAbsent(w.command.fullUserId(), k -> new Group());
      Long id = w.command.requestedId();
      if (id != null && (g.requestedId == null || id > g.requestedId)) {
        g.requestedId = id;
      }
      g.promises.add(w.promise);
    }
    return groups;
  }

  record Waiting(CheckpointCommand command, Promise<CheckpointCreated> promise) {
  }

  static final class Group {
    Long requestedId;
    final List<Promise<CheckpointCreated>> promises = new ArrayList<>(1);
  }

  private record HeadedBatch(String head, StoredBatch stored) implements MarkerDecision {
    @Override
    public boolean shouldAdvance() {
      return stored.shouldAdvance();
    }
  }

  /** Observes batches, for metrics. */
  public interface BatchListener {
    BatchListener NONE = new BatchListener() {
    };

    default void batchStarted(int requests, int users) {
    }

    default void batchFinished(long nanos, boolean succeeded) {
    }
  }
}
