package io.ackpoint.http;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Ackpoint's own HTTP port. One instance runs per event loop; all instances share the port and the
 * Ackpoint's request queues.
 */
public final class HttpVerticle extends VerticleBase {

  private final HttpSettings settings;
  private final int port;
  private HttpApi api;
  private HttpServer server;

  /**
   * {@code port}: {@code http.port}, or for 0 a negative number of this Ackpoint's own, which Vert.x
   * binds to one random port shared by the instances that give the same number (0 would give each
   * instance a port of its own; one number for two Ackpoints would share one port between them).
   */
  public HttpVerticle(HttpSettings settings, int port) {
    this.settings = settings;
    this.port = port;
  }

  @Override
  public Future<?> start() {
    return HttpApi.create(vertx, settings).compose(api -> {
      this.api = api;
      // Strict thread mode: a response is only ever written on its connection's event loop (routes,
      // event-bus replies and this verticle's subscriber consumer and sweep timer all run on this
      // context; Vert.x throws on a write from another thread), so writes go straight to the channel
      // instead of through a queue of each connection's own: about 4.7 KB less heap per open stream.
      server = vertx.createHttpServer(serverOptions(settings.config().http().idleTimeout())
          .setHost(settings.config().http().host())
          .setPort(port)
          .setCompressionSupported(false)
          .setTcpNoDelay(true)
          .setStrictThreadMode(true));
      String where = settings.config().http().host() + ":" + settings.config().http().port();
      return server.connectionHandler(settings.connections()::accept)
          .requestHandler(HttpDate.stamped(api.router())).invalidRequestHandler(api::invalidRequest).listen()
          .recover(e -> Future.failedFuture(new IllegalStateException(
              "could not listen on " + where + " (http.host, http.port): " + e.getMessage(), e)));
    });
  }

  /** The port this server listens on, once started. */
  public int actualPort() {
    return server == null ? 0 : server.actualPort();
  }

  /** The bytes of all of a request's headers together that Ackpoint reads; more are answered 431. */
  static final int MAX_HEADER_BYTES = 16 * 1024;

  /**
   * What every HTTP server of Ackpoint (the API's, the metrics port's) is: HTTP/1.1 only in clear
   * text, since browsers, scrapers and the PowerSync SDKs never use h2c, and a client that offered the
   * upgrade (the JDK's does) sometimes got an HTTP/1.1 body on a connection it took for HTTP/2; and a
   * connection on which nothing moves for {@code idleTimeout} is closed ({@code http.idle_timeout}).
   * Headers may take 16 KB, twice Vert.x's default: a JWT from an identity provider that lists a
   * user's groups or roles outgrows 8 KB (larger headers get 431). No route is a WebSocket, so no
   * WebSocket compression is offered: Vert.x then leaves its extension handler, which looks at every
   * response written, out of each connection's pipeline.
   */
  static HttpServerOptions serverOptions(Duration idleTimeout) {
    return new HttpServerOptions()
        .setHttp2ClearTextEnabled(false)
        .setPerMessageWebSocketCompressionSupported(false)
        .setPerFrameWebSocketCompressionSupported(false)
        .setMaxHeaderSize(MAX_HEADER_BYTES)
        .setIdleTimeout((int) idleTimeout.toMillis())
        .setIdleTimeoutUnit(TimeUnit.MILLISECONDS);
  }

  /**
   * Streams never end by themselves: they end first; then in-flight requests finish (their batches
   * still run) while no new connection is accepted, for at most half of {@code shutdown.timeout}:
   * the batcher, undeployed next, needs the rest to drain. Awaiting requests keep waiting through
   * most of that grace, since in a rolling restart their acknowledgement comes within it (another
   * node follows replication); those still waiting near its end answer {@code acknowledged: false}
   * instead of having their connections closed unanswered.
   */
  @Override
  public Future<?> stop() {
    if (api == null) {
      return Future.succeededFuture();
    }
    api.endStreams();
    if (server == null) {
      return api.close();
    }
    long grace = settings.config().shutdownTimeout().toMillis() / 2;
    long waitsEnd = vertx.setTimer(Math.max(1, grace - Math.min(1_000, grace / 2)), id -> api.endWaits());
    return server.shutdown(grace, TimeUnit.MILLISECONDS).eventually(() -> {
      vertx.cancelTimer(waitsEnd);
      return api.close();
    });
  }
}
