package io.ackpoint.http;

import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * Gives every request an id, the caller's {@code X-Request-Id} when it is a sensible one or a new
 * one, echoed in the response; with {@code log.access}, one line per request on logger
 * {@code ackpoint.access}, the id in the MDC as {@code request_id}.
 */
final class RequestLog implements Handler<RoutingContext> {

  static final String REQUEST_ID = "X-Request-Id";
  private static final String KEY = "ackpoint.request_id";
  private static final Pattern ACCEPTED = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
  private static final Logger ACCESS = LoggerFactory.getLogger("ackpoint.access");

  private final boolean access;

  RequestLog(boolean access) {
    this.access = access;
  }

  static String id(RoutingContext ctx) {
    return ctx.get(KEY);
  }

  /** Logs on the request's thread with its id in the MDC: the id is in every format, text or JSON. */
  static void withId(RoutingContext ctx, Runnable log) {
    MDC.put("request_id", id(ctx));
    try {
      log.run();
    } finally {
      MDC.remove("request_id");
    }
  }

  @Override
  public void handle(RoutingContext ctx) {
    String given = ctx.request().getHeader(REQUEST_ID);
    String id = given != null && ACCEPTED.matcher(given).matches() ? given : newId();
    ctx.put(KEY, id);
    ctx.response().putHeader(REQUEST_ID, id);
    if (access) {
      long start = System.nanoTime();
      ctx.addEndHandler(v -> withId(ctx, () -> ACCESS.info("{} {} {} {} ms", ctx.request().method(), ctx.request().path(),
          ctx.response().getStatusCode(), (System.nanoTime() - start) / 1_000_000)));
    }
    ctx.next();
  }

  private static String newId() {
    return Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
  }
}
