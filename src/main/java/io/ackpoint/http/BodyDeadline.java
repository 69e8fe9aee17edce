package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;

import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A request's body must arrive within twice {@code http.idle_timeout} of its head. The idle timeout
 * alone does not bound it: every piece of a body that comes is activity, so a body trickled a byte a
 * second held its connection for as long as the client liked, and enough such clients would hold
 * every connection Ackpoint allows. The request is answered 408 and its connection closed; if its
 * route answered already (it needed no body), the connection is closed. Twice, so that a body that
 * stops coming altogether is left to the idle timeout, which closes it first (a client that hung
 * up, not one refused).
 *
 * <p>One per router, used on its event loop only (HomeLoop). The bodies under way are kept in the
 * order they began and looked at by one periodic timer, set while any is under way, rather than a
 * timer per request: a checkpoint request's body is almost always whole by the time its route runs.
 */
final class BodyDeadline implements Handler<RoutingContext> {

  private final Vertx vertx;
  private final long deadlineNanos;
  private final long sweepMillis;
  /** Requests whose body is under way, oldest first, with the time their deadline passes. */
  private final Map<RoutingContext, Long> underWay = new LinkedHashMap<>();
  private long sweeper = -1;

  BodyDeadline(Vertx vertx, Duration idleTimeout) {
    this.vertx = vertx;
    this.deadlineNanos = idleTimeout.multipliedBy(2).toNanos();
    this.sweepMillis = Math.max(1, idleTimeout.toMillis() / 2);
  }

  @Override
  public void handle(RoutingContext ctx) {
    HttpServerRequest request = ctx.request();
    // Once per request, at its first pass (a rerouted request keeps the deadline it was given):
    // the map stays in deadline order, which the sweep relies on.
    if (!request.isEnded() && (request.headers().contains(HttpHeaders.CONTENT_LENGTH)
        || request.headers().contains(HttpHeaders.TRANSFER_ENCODING))
        && underWay.putIfAbsent(ctx, System.nanoTime() + deadlineNanos) == null) {
      if (sweeper < 0) {
        sweeper = vertx.setPeriodic(sweepMillis, id -> sweep());
      }
      // Completes when the body has arrived, or fails when the connection closes first.
      request.end().onComplete(ended -> underWay.remove(ctx));
    }
    ctx.next();
  }

  private void sweep() {
    long now = System.nanoTime();
    for (Iterator<Map.Entry<RoutingContext, Long>> it = underWay.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<RoutingContext, Long> body = it.next();
      if (now - body.getValue() < 0) {
        break;
      }
      it.remove();
      refuse(body.getKey());
    }
    if (underWay.isEmpty()) {
      vertx.cancelTimer(sweeper);
      sweeper = -1;
    }
  }

  private static void refuse(RoutingContext ctx) {
    if (ctx.response().headWritten()) {
      ctx.request().connection().close();
    } else {
      Responses.lastOnItsConnection(ctx);
      Responses.error(ctx.response(), AckpointError.BODY_TOO_SLOW);
    }
  }
}
