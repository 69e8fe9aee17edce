package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.ackpoint.AckpointException;
import io.ackpoint.auth.AuthenticatedUser;
import io.ackpoint.auth.Authenticator;
import io.ackpoint.core.FullUserId;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;

/** Route handler that lets only requests with a valid JWT through, and records who sent them. */
final class Authentication implements Handler<RoutingContext> {

  private static final String USER = "ackpoint.user";

  private final Authenticator authenticator;

  Authentication(Authenticator authenticator) {
    this.authenticator = authenticator;
  }

  static AuthenticatedUser user(RoutingContext ctx) {
    return ctx.get(USER);
  }

  /** The authenticated sub with a client id the route already validated. */
  static FullUserId fullUserId(RoutingContext ctx, String clientId) {
    return new FullUserId(user(ctx).userId(), clientId);
  }

  /**
   * Whether the request carries more than one Authorization header: Ackpoint would read the first,
   * and whatever authorised the request in front of it perhaps the last, so it is refused.
   */
  static boolean moreThanOneCredential(RoutingContext ctx) {
    return ctx.request().headers().getAll(HttpHeaders.AUTHORIZATION).size() > 1;
  }

  @Override
  public void handle(RoutingContext ctx) {
    if (moreThanOneCredential(ctx)) {
      ctx.response().putHeader("WWW-Authenticate", "Bearer");
      Responses.error(ctx.response(), AckpointError.AUTH_MALFORMED, "more than one Authorization header");
      return;
    }
    authenticator.authenticate(ctx.request().getHeader(HttpHeaders.AUTHORIZATION)).onComplete(ar -> {
      if (ar.succeeded()) {
        ctx.put(USER, ar.result());
        ctx.next();
      } else if (ar.cause() instanceof AckpointException e && e.status() == 401) {
        ctx.response().putHeader("WWW-Authenticate", "Bearer");
        Responses.error(ctx.response(), e);
      } else {
        ctx.fail(ar.cause());
      }
    });
  }
}
