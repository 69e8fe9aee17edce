package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.vertx.ext.web.Router;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How Ackpoint's routers answer failures: in the JSON envelope, by status. Installed as a failure
 * handler, which a host that mounts the router (Ackpoint#createRouter) does not bypass, as it does a
 * router's error handlers, and as error handlers too, for the failures that never reach a failure
 * handler (a path that cannot be decoded, a failure handler's own failure).
 */
final class FailureResponses {

  private static final Logger LOG = LoggerFactory.getLogger(FailureResponses.class);

  private FailureResponses() {
  }

  static void install(Router router, long bodyLimit) {
    router.route().failureHandler(ctx -> failed(ctx, ctx.statusCode(), bodyLimit));
    // The context of a failure that reaches an error handler may not carry its status: it is given.
    for (int status : new int[] {400, 403, 404, 413, 417, 500}) {
      router.errorHandler(status, ctx -> failed(ctx, status, bodyLimit));
    }
  }

  /**
   * A failure by its status: Vert.x's own (body handler, CORS, route matching) are the client's, and
   * answered as such; only a failure without a status of its own (or 500) is Ackpoint's, and logged.
   */
  private static void failed(RoutingContext ctx, int status, long bodyLimit) {
    switch (status) {
      case 413 -> Responses.error(ctx.response(), AckpointError.PAYLOAD_TOO_LARGE, tooLarge(ctx, bodyLimit));
      case 400 -> Responses.error(ctx.response(), AckpointError.BAD_REQUEST);
      // The CORS handler refuses an origin that is not allowed, or not an origin.
      case 403 -> Responses.error(ctx.response(), AckpointError.FORBIDDEN, reason(ctx, AckpointError.FORBIDDEN));
      // A request target that is not a path ("OPTIONS *", "GET probes").
      case 404 -> Responses.error(ctx.response(), AckpointError.NOT_FOUND, "no route " + ctx.request().method() + " " + ctx.request().uri());
      // The body handler answers an Expect other than 100-continue with 417; without a handler of its
      // own, that was plain text, and an ERROR line in the log for any client to provoke.
      case 417 -> Responses.error(ctx.response(), AckpointError.EXPECTATION_FAILED);
      case 200 -> bodyNotRead(ctx);
      default -> {
        if (status >= 400 && status < 500) {
          Responses.error(ctx.response(), AckpointError.BAD_REQUEST, reason(ctx, AckpointError.BAD_REQUEST));
        } else {
          internalError(ctx);
        }
      }
    }
  }

  /**
   * A body declared no longer than Ackpoint's limit was refused by another body handler: the one of
   * the router that Ackpoint's routes are mounted on, whose limit applies first (and is not known here).
   */
  private static String tooLarge(RoutingContext ctx, long bodyLimit) {
    String declared = ctx.request().getHeader(HttpHeaders.CONTENT_LENGTH);
    if (declared != null && declared.matches("\\d{1,18}") && Long.parseLong(declared) <= bodyLimit) {
      return "the request body exceeds the body limit of the application's router that Ackpoint's routes are mounted on";
    }
    return "the request body exceeds " + bodyLimit + " bytes";
  }

  private static String reason(RoutingContext ctx, AckpointError error) {
    return ctx.failure() != null && ctx.failure().getMessage() != null ? ctx.failure().getMessage() : error.description();
  }

  /**
   * The body handler fails a request with status 200 when its body stops coming (the client hung up
   * or reset the connection mid-body). The client's doing, not a fault of Ackpoint's: without a
   * handler of its own, the router logged each as an unhandled exception, at ERROR, for any client
   * to provoke at will. There is nobody left to answer, as a rule; should the connection still be
   * open, the request is refused like any other that could not be read.
   */
  private static void bodyNotRead(RoutingContext ctx) {
    RequestLog.withId(ctx, () -> LOG.debug("the body of {} {} could not be read: {}", ctx.request().method(),
        ctx.request().path(), ctx.failure() == null ? "no reason" : ctx.failure().toString()));
    if (!ctx.response().closed() && !ctx.response().ended()) {
      // The rest of the body may still come: the connection cannot carry another request.
      Responses.lastOnItsConnection(ctx);
      Responses.error(ctx.response(), AckpointError.BAD_REQUEST, "the request body could not be read");
    }
  }

  private static void internalError(RoutingContext ctx) {
    Throwable failure = ctx.failure();
    if (!(failure instanceof io.ackpoint.AckpointException)) {
      RequestLog.withId(ctx, () -> LOG.error("unexpected failure on {} {}", ctx.request().method(), ctx.request().path(), failure));
    }
    Responses.error(ctx.response(), failure);
  }
}
