package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;

import java.util.Collections;
import java.util.Locale;
import java.util.Set;
import java.util.WeakHashMap;

/**
 * Request bodies framed by a transfer coding. Only {@code chunked} is understood: a body sent with
 * another coding (gzip, say) is refused with 501, as RFC 9112 section 6.1 asks, rather than read as
 * if it were plain. And a request that came with a transfer coding is the last one served on its
 * connection: Netty drops a {@code Content-Length} sent beside {@code Transfer-Encoding}, so the
 * request that smuggles a second one past a proxy reading the other header cannot be told from an
 * honest chunked one here; RFC 9112 asks the server to close the connection after it, and whatever
 * the client pipelined behind it is dropped with the connection, not answered. One instance per
 * router, used on its event loop only.
 */
final class TransferCodings implements Handler<RoutingContext> {

  /** Weak: a connection leaves when it is gone (its close handler is the connection limit's). */
  private final Set<HttpConnection> ending = Collections.newSetFromMap(new WeakHashMap<>());

  /** Whether {@code connection} carried a request framed by a transfer coding: nothing more is answered on it. */
  boolean fenced(HttpConnection connection) {
    return ending.contains(connection);
  }

  /** The router's first handler: a request on a fenced connection is dropped with the connection. */
  void fence(RoutingContext ctx) {
    if (fenced(ctx.request().connection())) {
      ctx.response().reset();
      return;
    }
    ctx.next();
  }

  @Override
  public void handle(RoutingContext ctx) {
    HttpConnection connection = ctx.request().connection();
    if (!ctx.request().headers().contains(HttpHeaders.TRANSFER_ENCODING)) {
      ctx.next();
      return;
    }
    ending.add(connection);
    Responses.lastOnItsConnection(ctx);
    String codings = String.join(",", ctx.request().headers().getAll(HttpHeaders.TRANSFER_ENCODING));
    if (!codings.trim().toLowerCase(Locale.ROOT).equals("chunked")) {
      Responses.error(ctx.response(), AckpointError.TRANSFER_CODING_NOT_IMPLEMENTED);
      return;
    }
    ctx.next();
  }
}
