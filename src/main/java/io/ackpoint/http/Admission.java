package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;

/** Route handler that runs the rest of the route inside a {@link RequestQueue} slot, or answers 429. */
final class Admission implements Handler<RoutingContext> {

  private static final String SLOT = "ackpoint.admission.slot";

  private final RequestQueue queue;

  Admission(RequestQueue queue) {
    this.queue = queue;
  }

  @Override
  public void handle(RoutingContext ctx) {
    Entry entry = new Entry(ctx);
    RequestQueue.Admission admission = queue.enter(ctx.vertx().getOrCreateContext(), entry);
    if (admission == RequestQueue.Admission.REJECTED) {
      Responses.error(ctx.response(), AckpointError.TOO_MANY_REQUESTS,
          "too many concurrent " + queue.name() + " requests, retry later");
    } else if (admission == RequestQueue.Admission.QUEUED) {
      entry.awaitSlot();
    }
  }

  /** A request's entry into the queue: it runs the rest of the route once it holds a slot. */
  private final class Entry implements Runnable {
    private final RoutingContext ctx;
    /** The timer of a queued request's wait, -1 for a request that ran at once. */
    private long waitTimer = -1;

    Entry(RoutingContext ctx) {
      this.ctx = ctx;
    }

    /**
     * A stream holds its slot for as long as its token lives: without a bound, a request queued
     * behind streams would wait until the idle timeout closed its connection, unanswered.
     */
    void awaitSlot() {
      waitTimer = ctx.vertx().setTimer(queue.maxWaitMillis(), id -> {
        if (queue.withdraw(this) && !ctx.response().closed()) {
          Responses.error(ctx.response(), AckpointError.TOO_MANY_REQUESTS,
              "no " + queue.name() + " slot came free within " + queue.maxWaitMillis() + " ms, retry later");
        }
      });
    }

    @Override
    public void run() {
      // A queued entry runs on this request's context after handle returned, so its timer is set.
      if (waitTimer >= 0) {
        ctx.vertx().cancelTimer(waitTimer);
      }
      Slot slot = new Slot(queue);
      if (RequestEnd.over(ctx)) {
        // The client gave up while it waited (see RequestEnd: its connection may not say closed yet).
        slot.release();
        return;
      }
      ctx.put(SLOT, slot);
      ctx.addEndHandler(v -> slot.release());
      ctx.next();
    }
  }

  /**
   * Gives the request's slot back before its response ends, for a route whose rest is waiting, not
   * work: a slot bounds the work running at once, and waiting requests that kept theirs would keep
   * every other request of the group out for as long as they wait.
   */
  static void leave(RoutingContext ctx) {
    Slot slot = ctx.get(SLOT);
    if (slot != null) {
      slot.release();
    }
  }

  /** A slot is given back exactly once, however the response ends. Used on one event loop only. */
  private static final class Slot {
    private final RequestQueue queue;
    private boolean released;

    Slot(RequestQueue queue) {
      this.queue = queue;
    }

    void release() {
      if (!released) {
        released = true;
        queue.release();
      }
    }
  }
}
