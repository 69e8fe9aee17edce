package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.vertx.ext.web.RoutingContext;

/**
 * A path is served only as its route spells it. Vert.x would serve /metrics also for /metrics/,
 * //metrics, /x/../metrics and /%6Detrics; a proxy in front that guards a path by its name (deny
 * /metrics to the internet) would let those through. They are 404s, as on the reference.
 */
final class CanonicalPath {

  private CanonicalPath() {
  }

  /** Whether the request's path is a route's spelling; if not, it is answered 404 (400 if it cannot be decoded). */
  static boolean accepts(RoutingContext ctx) {
    String normalized;
    try {
      normalized = ctx.normalizedPath();
    } catch (IllegalArgumentException undecodable) {
      ctx.fail(400, undecodable);
      return false;
    }
    if (!canonical(ctx.request().path(), normalized)) {
      Responses.error(ctx.response(), AckpointError.NOT_FOUND, "no route " + ctx.request().method() + " " + ctx.request().path()
          + " (a path is matched only as its route spells it)");
      return false;
    }
    return true;
  }

  /** The request's path if it is a route's spelling, else null. */
  static String of(RoutingContext ctx) {
    try {
      String path = ctx.request().path();
      return canonical(path, ctx.normalizedPath()) ? path : null;
    } catch (IllegalArgumentException undecodable) {
      // A path with a broken percent-escape: answered 400; no route of Ackpoint's.
      return null;
    }
  }

  /**
   * Whether {@code path} is spelled as a route would spell it: no empty or dot segment, no
   * character escaped that needs no escape, no slash at the end but the root's.
   */
  private static boolean canonical(String path, String normalized) {
    return path != null && path.equals(normalized) && (path.length() == 1 || !path.endsWith("/"));
  }
}
