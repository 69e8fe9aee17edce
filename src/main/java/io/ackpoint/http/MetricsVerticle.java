package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.time.Duration;
import java.util.function.Supplier;

/**
 * {@code GET /metrics} on a port of its own ({@code metrics.port}), so that the API port need not
 * expose it and a scraper need not reach the API.
 */
public final class MetricsVerticle extends VerticleBase {

  private final String host;
  private final int port;
  private final Supplier<String> text;
  private final Duration idleTimeout;
  private HttpServer server;

  public MetricsVerticle(String host, int port, Supplier<String> text, Duration idleTimeout) {
    this.host = host;
    this.port = port;
    this.text = text;
    this.idleTimeout = idleTimeout;
  }

  private static Handler<RoutingContext> handler(Supplier<String> text) {
    return ctx -> Responses.endWithLength(ctx.response()
        .putHeader(HttpHeaders.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8"), Buffer.buffer(text.get()));
  }

  /** GET and HEAD of {@code /metrics}, on this port or the API's. */
  static void route(Router router, Supplier<String> text) {
    router.route("/metrics").method(HttpMethod.GET).method(HttpMethod.HEAD).handler(handler(text));
  }

  @Override
  public Future<?> start() {
    Router router = Router.router(vertx);
    router.route().handler(RequestTarget::check);
    route(router, text);
    // The JSON errors of the API's port, not Vert.x's HTML page.
    router.route("/metrics").handler(ctx -> {
      ctx.response().putHeader(HttpHeaders.ALLOW, "GET, HEAD");
      Responses.error(ctx.response(), AckpointError.METHOD_NOT_ALLOWED,
          "method " + ctx.request().method() + " is not allowed on /metrics");
    });
    router.route().handler(ctx -> Responses.error(ctx.response(), AckpointError.NOT_FOUND,
        "no route " + ctx.request().method() + " " + ctx.request().path() + ": this port serves /metrics alone"));
    FailureResponses.install(router, 0);
    server = vertx.createHttpServer(HttpVerticle.serverOptions(idleTimeout));
    return server.requestHandler(HttpDate.stamped(router)).listen(port, host)
        .recover(e -> Future.failedFuture(new IllegalStateException(
            "could not listen on " + host + ":" + port + " (http.host, metrics.port): " + e.getMessage(), e)));
  }

  @Override
  public Future<?> stop() {
    return server == null ? Future.succeededFuture() : server.close();
  }
}
