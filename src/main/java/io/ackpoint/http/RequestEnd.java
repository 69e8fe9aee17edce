package io.ackpoint.http;

import io.vertx.ext.web.RoutingContext;

/**
 * Whether a request is over (its response ended, or its connection failed or closed), watched from
 * its first handler on. Vert.x Web calls a request's end handlers once, at the first of those events,
 * and never one added after it; and a connection reset by the client is such an event a moment
 * before the response says it is closed: Netty reports the error at once and the closed channel in a
 * later task of the loop. So a handler that runs in between (a queued request given its slot, say)
 * finds {@code response().closed()} false, and an end handler it adds waits for an end that already
 * happened. Asked here, it is told the truth.
 */
final class RequestEnd {

  private static final String ENDED = "ackpoint.request.ended";

  private RequestEnd() {
  }

  /**
   * Watches {@code ctx}: the first handler of Ackpoint's router, so it runs in the task that read the
   * request, while its connection was sound, unless a host's router that mounts Ackpoint's holds the
   * request back before it.
   */
  static void watch(RoutingContext ctx) {
    ctx.addEndHandler(v -> ctx.put(ENDED, Boolean.TRUE));
    ctx.next();
  }

  /** Whether the request is over: nothing will end its response, and an end handler added now would never be called. */
  static boolean over(RoutingContext ctx) {
    return ctx.response().closed() || ctx.get(ENDED) != null;
  }
}
