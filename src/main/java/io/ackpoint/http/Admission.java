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
    RequestQueue.Admission admission = queue.enter(ctx.vertx().getOrCreateContext(), () -> {
      Slot slot = new Slot(queue);
      if (ctx.response().closed()) {
        // The client gave up while it waited: nothing will end this response.
        slot.release();
        return;
      }
      ctx.put(SLOT, slot);
      ctx.addEndHandler(v -> slot.release());
      ctx.next();
    });
    if (admission == RequestQueue.Admission.REJECTED) {
      Responses.error(ctx.response(), AckpointError.TOO_MANY_REQUESTS,
          "too many concurrent " + queue.name() + " requests, retry later");
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
