package io.ackpoint.http;

import io.ackpoint.AckpointException;
import io.ackpoint.auth.JwtAuthenticator;
import io.ackpoint.config.AckpointConfig;
import io.ackpoint.metrics.AckpointMetrics;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpHeaders;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The public HTTP API. One instance runs per event loop; all instances share the port and the
 * per-process request queues.
 */
public final class HttpVerticle extends VerticleBase {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(HttpVerticle.class);

  private final AckpointConfig config;
  private final HttpQueues queues;
  private final AckpointMetrics metrics;
  private HttpServer server;
  private AckSubscribers subscribers;
  private JwtAuthenticator authenticator;

  public HttpVerticle(AckpointConfig config, HttpQueues queues, AckpointMetrics metrics) {
    this.config = config;
    this.queues = queues;
    this.metrics = metrics;
  }

  @Override
  public Future<?> start() {
    subscribers = new AckSubscribers(vertx);
    return subscribers.start().compose(v -> JwtAuthenticator.create(vertx, config.auth(), metrics)).compose(authenticator -> {
      this.authenticator = authenticator;
      Router router = router(authenticator);
      server = vertx.createHttpServer(new HttpServerOptions()
          .setHost(config.http().host())
          .setPort(config.http().port())
          .setCompressionSupported(false)
          .setTcpNoDelay(true));
      return server.requestHandler(router).invalidRequestHandler(HttpVerticle::invalidRequest).listen();
    });
  }

  private Router router(JwtAuthenticator authenticator) {
    Router router = Router.router(vertx);
    router.route().handler(this::measure);
    router.route().handler(Cors.handler(config.http().corsAllowedOrigins()));
    router.route().handler(new StrictQuery());
    Authentication authentication = new Authentication(authenticator);
    Admission checkpointing = new Admission(queues.checkpointing());
    Admission streaming = new Admission(queues.stream());
    CheckpointRoutes checkpoints = new CheckpointRoutes(vertx.eventBus(), subscribers, config.acknowledgement(),
        config.batching().requestTimeout());
    StreamRoutes streams = new StreamRoutes(vertx.eventBus(), subscribers, config.acknowledgement().keepaliveInterval(),
        metrics.openStreams());
    BodyHandler body = BodyHandler.create(false).setBodyLimit(config.http().bodyLimit());

    router.get("/write-checkpoint2.json")
        .handler(authentication)
        .handler(checkpointing)
        .handler(checkpoints::writeCheckpoint2);
    router.post("/sync/checkpoint-request")
        .handler(body)
        .handler(HttpVerticle::requireJsonContentType)
        .handler(authentication)
        .handler(checkpointing)
        .handler(checkpoints::checkpointRequest);

    router.get("/write-checkpoint.json")
        .handler(authentication)
        .handler(checkpointing)
        .handler(checkpoints::writeCheckpointLegacy);
    router.post("/sync/stream")
        .handler(body)
        .handler(HttpVerticle::requireJsonContentType)
        .handler(authentication)
        .handler(streaming)
        .handler(streams::syncStream);
    router.get("/sse/checkpoints")
        .handler(authentication)
        .handler(streaming)
        .handler(streams::serverSentEvents);

    AdminRoutes admin = new AdminRoutes(vertx.eventBus(), config.adminToken());
    router.post("/admin/compact")
        .handler(admin::authorize)
        .handler(new Admission(queues.api()))
        .handler(admin::compact);

    // An authenticated no-op: who the token says you are. Also the benchmark's reference for the
    // cost of HTTP and JWT verification alone.
    router.get("/whoami")
        .handler(authentication)
        .handler(ctx -> Responses.data(ctx.response(), new JsonObject().put("user_id", Authentication.user(ctx).userId())));
    router.get("/metrics").handler(ctx -> ctx.response()
        .putHeader(HttpHeaders.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")
        .end(metrics.scrape()));

    ProbeRoutes probes = new ProbeRoutes(vertx.eventBus());
    router.get("/probes/liveness").handler(probes::liveness);
    router.get("/probes/readiness").handler(probes::readiness);
    router.get("/probes/startup").handler(probes::readiness);

    router.errorHandler(404, ctx -> Responses.error(ctx.response(), 404, "ACK_NOT_FOUND",
        "no route " + ctx.request().method() + " " + ctx.request().path()));
    router.errorHandler(405, ctx -> Responses.error(ctx.response(), 405, "ACK_METHOD_NOT_ALLOWED",
        "method " + ctx.request().method() + " is not allowed on " + ctx.request().path()));
    router.errorHandler(413, ctx -> Responses.error(ctx.response(), 413, "ACK_PAYLOAD_TOO_LARGE",
        "the request body exceeds " + config.http().bodyLimit() + " bytes"));
    router.errorHandler(400, ctx -> Responses.error(ctx.response(), 400, "ACK_BAD_REQUEST", "bad request"));
    router.errorHandler(500, this::internalError);
    return router;
  }

  /** Records every request by route and status; unmatched paths count as one route, so cardinality stays bounded. */
  private void measure(RoutingContext ctx) {
    long start = System.nanoTime();
    ctx.addEndHandler(v -> {
      String route = ctx.currentRoute() == null || ctx.currentRoute().getPath() == null || ctx.statusCode() == 404
          ? "unmatched" : ctx.currentRoute().getPath();
      metrics.request(route, ctx.response().getStatusCode(), System.nanoTime() - start);
    });
    ctx.next();
  }

  /** Requests Netty could not decode (header or request line too long, bad framing) get the JSON envelope too. */
  private static void invalidRequest(HttpServerRequest request) {
    Throwable cause = request.decoderResult().cause();
    int status = cause instanceof TooLongHttpHeaderException ? 431 : cause instanceof TooLongHttpLineException ? 414 : 400;
    String code = status == 431 ? "ACK_HEADERS_TOO_LARGE" : status == 414 ? "ACK_URI_TOO_LONG" : "ACK_BAD_REQUEST";
    request.response().putHeader(HttpHeaders.CONNECTION, "close");
    Responses.error(request.response(), status, code, "the request could not be read: " + (status == 400 ? "malformed HTTP" : code));
  }

  /** JSON routes take {@code application/json} (or no content type, as some clients send none). */
  private static void requireJsonContentType(RoutingContext ctx) {
    String type = ctx.request().getHeader(HttpHeaders.CONTENT_TYPE);
    if (type != null) {
      String mime = type.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
      if (!mime.equals("application/json") && !mime.isEmpty()) {
        Responses.error(ctx.response(), 415, "ACK_UNSUPPORTED_MEDIA_TYPE", "the request body must be application/json");
        return;
      }
    }
    ctx.next();
  }

  private void internalError(RoutingContext ctx) {
    Throwable failure = ctx.failure();
    if (failure instanceof AckpointException e) {
      Responses.error(ctx.response(), e);
      return;
    }
    LOG.error("unexpected failure on {} {}", ctx.request().method(), ctx.request().path(), failure);
    Responses.error(ctx.response(), 500, "ACK_INTERNAL", "internal error");
  }

  @Override
  public Future<?> stop() {
    // Streams never end by themselves: end them first, then let in-flight requests finish (their
    // batches still run) for a bounded time while no new connection is accepted.
    subscribers.endAll();
    Future<Void> closed = server == null ? Future.succeededFuture() : server.shutdown(10, TimeUnit.SECONDS);
    return closed.eventually(() -> subscribers.stop())
        .eventually(() -> authenticator == null ? Future.succeededFuture() : authenticator.close());
  }

}
