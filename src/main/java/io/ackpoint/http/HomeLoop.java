package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.netty.channel.EventLoop;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The router's first handler after {@link RequestEnd}: a request served on another event loop than the one the router was
 * made on is refused (500), naming the fix. What the routes keep (the turn's commands for the
 * batcher, the stream subscribers, the admission queues) belongs to that loop and is used without
 * locks, so a host that mounted one router into servers of several loops (verticle instances
 * sharing it) would otherwise lose requests to races, silently and only under load. Any context of
 * the router's loop is its home (one thread); a router made on a worker context is at home on that
 * context alone, whose tasks never run two at once.
 */
final class HomeLoop implements Handler<RoutingContext> {

  private static final Logger LOG = LoggerFactory.getLogger(HomeLoop.class);
  static final String REFUSAL = "this request is served on another thread than the event loop (or worker context) this"
      + " router was made on: call Ackpoint.createRouter on each event loop that serves it (in the start of each HTTP"
      + " verticle instance), and let no handler before it resume the request on a thread of its own";

  private final ContextInternal made;
  private final EventLoop loop;
  private final AtomicBoolean logged = new AtomicBoolean();

  /** Must be made on the event loop that will serve the router. */
  HomeLoop(Vertx vertx) {
    this.made = ((ContextInternal) vertx.getOrCreateContext()).unwrap();
    this.loop = made.isEventLoopContext() ? made.nettyEventLoop() : null;
  }

  private boolean atHome() {
    if (loop != null) {
      return loop.inEventLoop();
    }
    ContextInternal current = ContextInternal.current();
    return current != null && current.unwrap() == made;
  }

  @Override
  public void handle(RoutingContext ctx) {
    if (atHome()) {
      ctx.next();
      return;
    }
    if (logged.compareAndSet(false, true)) {
      LOG.error("{} (logged once per router)", REFUSAL);
    }
    Responses.error(ctx.response(), AckpointError.INTERNAL, REFUSAL);
  }
}
