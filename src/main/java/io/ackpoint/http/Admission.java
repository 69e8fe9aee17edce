package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;

/** Route handler that runs the rest of the route inside a {@link RequestQueue} slot, or answers 429. */
final class Admission implements Handler<RoutingContext> {

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
      ctx.addEndHandler(v -> slot.release());
      ctx.next();
    });
    if (admission == RequestQueue.Admission.REJECTED) {
      Responses.error(ctx.response(), AckpointError.TOO_MANY_REQUESTS,
          "too many concurrent " + queue.name() + " requests, retry later");
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
