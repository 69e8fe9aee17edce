package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.ackpoint.auth.Authenticator;
import io.ackpoint.config.AckpointConfig;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Ackpoint's HTTP API on one event loop: the router with every route, and what it keeps there (the
 * stream subscribers, the authenticator). Made on the event loop that will serve it, by an HTTP
 * verticle of Ackpoint's own or by the host application that mounts the router into its own.
 */
public final class HttpApi {

  private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);

  private final Router router;
  private final AckSubscribers subscribers;
  private final Authenticator authenticator;
  private final TransferCodings transferCodings;
  private final CheckpointRoutes checkpoints;
  private final AtomicBoolean closed;

  private HttpApi(Router router, AckSubscribers subscribers, Authenticator authenticator, TransferCodings transferCodings,
                  CheckpointRoutes checkpoints, AtomicBoolean closed) {
    this.router = router;
    this.closed = closed;
    this.subscribers = subscribers;
    this.authenticator = authenticator;
    this.transferCodings = transferCodings;
    this.checkpoints = checkpoints;
  }

  /** Refuses, naming the key, what the API's settings hold that its routes could not serve. */
  public static void requireServable(AckpointConfig config) {
    Cors.requireValidOrigins(config.http().corsAllowedOrigins());
  }

  /** Must be called on the event loop that will serve the routes. */
  public static Future<HttpApi> create(Vertx vertx, HttpSettings settings) {
    AckSubscribers subscribers = new AckSubscribers(vertx, settings.addresses().positionReached());
    return subscribers.start()
        .compose(v -> settings.authenticators().create(vertx))
        .map(authenticator -> {
          TransferCodings transferCodings = new TransferCodings();
          CheckpointRoutes checkpoints = new CheckpointRoutes(vertx, settings, subscribers);
          AtomicBoolean closed = new AtomicBoolean();
          Router router = router(vertx, settings, subscribers, authenticator, transferCodings, checkpoints, closed);
          return new HttpApi(router, subscribers, authenticator, transferCodings, checkpoints, closed);
        });
  }

  public Router router() {
    return router;
  }

  /** Ends every open stream: they never end by themselves. */
  public void endStreams() {
    subscribers.endStreams();
  }

  /**
   * Every awaiting request answers now: a {@code ?wait=} request whether its checkpoint is
   * acknowledged, a legacy one 503.
   */
  public void endWaits() {
    subscribers.endWaits();
    checkpoints.endLegacyWaits();
  }

  /** Ends the streams and waits; requests that still reach the router (a host's server) are answered 503. */
  public Future<Void> close() {
    closed.set(true);
    subscribers.endAll();
    return subscribers.stop().eventually(authenticator::close);
  }

  private static Router router(Vertx vertx, HttpSettings settings, AckSubscribers subscribers, Authenticator authenticator,
                               TransferCodings transferCodings, CheckpointRoutes checkpoints, AtomicBoolean closed) {
    AckpointConfig config = settings.config();
    Router router = Router.router(vertx);
    // First: a request pipelined behind one framed by a transfer coding is answered by nothing.
    router.route().handler(transferCodings::fence);
    router.route().handler(new RequestLog(config.log().access()));
    // The Allow header of each path the router serves, filled once every route is added (before the
    // server takes a request): the metrics' route labels are its keys.
    Map<String, String> allowed = new HashMap<>();
    router.route().handler(ctx -> measure(ctx, settings.listener(), allowed.keySet()));
    router.route().handler(Cors.handler(config.http().corsAllowedOrigins()));
    router.route().handler(ctx -> {
      if (closed.get()) {
        Responses.error(ctx.response(), AckpointError.UNAVAILABLE, "this Ackpoint is closed");
      } else {
        ctx.next();
      }
    });
    router.route().handler(new StrictQuery());
    router.route().handler(transferCodings);
    Authentication authentication = new Authentication(authenticator);
    Admission checkpointing = new Admission(settings.queues().checkpointing());
    Admission streaming = new Admission(settings.queues().stream());
    StreamRoutes streams = new StreamRoutes(vertx.eventBus(), settings, subscribers);
    // Sized by Content-Length (bounded by the limit) instead of 1 KB: an open stream keeps its request,
    // and so its body, for its whole life.
    BodyHandler body = BodyHandler.create(false).setBodyLimit(config.http().bodyLimit()).setPreallocateBodyBuffer(true);

    router.get("/write-checkpoint2.json").handler(authentication).handler(checkpointing).handler(checkpoints::writeCheckpoint2);
    router.post("/sync/checkpoint-request").handler(body).handler(HttpApi::requireJsonContentType)
        .handler(authentication).handler(checkpointing).handler(checkpoints::checkpointRequest);
    router.get("/write-checkpoint.json").handler(authentication).handler(checkpointing).handler(checkpoints::writeCheckpointLegacy);
    router.post("/sync/stream").handler(body).handler(HttpApi::requireJsonContentType)
        .handler(authentication).handler(streaming).handler(streams::syncStream);
    router.get("/sse/checkpoints").handler(authentication).handler(streaming).handler(streams::serverSentEvents);

    AdminRoutes admin = new AdminRoutes(vertx.eventBus(), settings.addresses(), config.adminToken());
    Admission api = new Admission(settings.queues().api());
    router.post("/admin/compact").handler(admin::authorize).handler(api).handler(admin::compact);
    router.get("/admin/status").handler(admin::authorize).handler(api).handler(admin::status);

    // An authenticated no-op: who the token says you are. Also the benchmark's reference for the
    // cost of HTTP and JWT verification alone.
    router.get("/whoami").handler(authentication)
        .handler(ctx -> Responses.data(ctx.response(), new JsonObject().put("user_id", Authentication.user(ctx).userId())));
    if (settings.metricsText() != null && config.metricsPort() == 0) {
      router.get("/metrics").handler(MetricsVerticle.handler(settings.metricsText()));
    }

    ProbeRoutes probes = new ProbeRoutes(vertx.eventBus(), settings.addresses(), settings.livenessProblem());
    // HEAD too: some load balancers' health checks send it; nothing else that is safe to repeat needs it.
    router.route("/probes/liveness").method(HttpMethod.GET).method(HttpMethod.HEAD).handler(probes::liveness);
    router.route("/probes/readiness").method(HttpMethod.GET).method(HttpMethod.HEAD).handler(probes::readiness);
    router.route("/probes/startup").method(HttpMethod.GET).method(HttpMethod.HEAD).handler(probes::readiness);

    allowed.putAll(allowedMethods(router));
    // Unmatched requests and failures are answered by a route and a failure handler of this router
    // rather than by its error handlers: a host that mounts the router into its own
    // (Ackpoint#createRouter) would answer them, since Vert.x consults only the outer router's error
    // handlers, in plain text (a 500 and an ERROR line for any client's bad body).
    router.route().handler(ctx -> unmatched(ctx, allowed));
    router.route().failureHandler(ctx -> failed(ctx, ctx.statusCode(), config.http().bodyLimit()));
    // Ackpoint's own server: failures that never reach a failure handler (a path that cannot be
    // decoded, a failure handler's own failure) are answered the same way; the context of such a
    // failure may not carry its status, so it is given.
    for (int status : new int[] {400, 403, 404, 405, 413, 417, 500}) {
      router.errorHandler(status, ctx -> failed(ctx, status, config.http().bodyLimit()));
    }
    return router;
  }

  /** A JSON 404, or 405 with the methods the path does support (RFC 9110). */
  private static void unmatched(RoutingContext ctx, Map<String, String> allowed) {
    String allow = allowed.get(routePath(ctx));
    if (allow == null) {
      Responses.error(ctx.response(), AckpointError.NOT_FOUND, "no route " + ctx.request().method() + " " + ctx.request().path());
      return;
    }
    ctx.response().putHeader(HttpHeaders.ALLOW, allow);
    Responses.error(ctx.response(), AckpointError.METHOD_NOT_ALLOWED,
        "method " + ctx.request().method() + " is not allowed on " + ctx.request().path());
  }

  /**
   * A failure by its status: Vert.x's own (body handler, CORS, route matching) are the client's, and
   * answered as such; only a failure without a status of its own (or 500) is Ackpoint's, and logged.
   */
  private static void failed(RoutingContext ctx, int status, long bodyLimit) {
    switch (status) {
      case 413 -> Responses.error(ctx.response(), AckpointError.PAYLOAD_TOO_LARGE, "the request body exceeds " + bodyLimit + " bytes");
      case 400 -> Responses.error(ctx.response(), AckpointError.BAD_REQUEST);
      // The CORS handler refuses an origin that is not allowed, or not an origin.
      case 403 -> Responses.error(ctx.response(), AckpointError.FORBIDDEN, reason(ctx, AckpointError.FORBIDDEN));
      // A request target that is not a path ("OPTIONS *", "GET probes").
      case 404 -> Responses.error(ctx.response(), AckpointError.NOT_FOUND, "no route " + ctx.request().method() + " " + ctx.request().uri());
      case 405 -> Responses.error(ctx.response(), AckpointError.METHOD_NOT_ALLOWED);
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

  private static String reason(RoutingContext ctx, AckpointError error) {
    return ctx.failure() != null && ctx.failure().getMessage() != null ? ctx.failure().getMessage() : error.description();
  }

  /**
   * The path as this router matched it: without the host's mount point, and normalized, so that
   * //write-checkpoint2.json or /x/../write-checkpoint2.json is /write-checkpoint2.json; null if
   * it cannot be decoded.
   */
  private static String routePath(RoutingContext ctx) {
    String path;
    try {
      path = ctx.normalizedPath();
    } catch (IllegalArgumentException undecodable) {
      // A path with a broken percent-escape: answered 400 already; no route of Ackpoint's.
      return null;
    }
    // Vert.x serves /whoami/ by the route /whoami.
    if (path != null && path.length() > 1 && path.endsWith("/")) {
      path = path.substring(0, path.length() - 1);
    }
    String mount = ctx.mountPoint();
    if (path == null || mount == null) {
      return path;
    }
    String base = mount.endsWith("/") ? mount.substring(0, mount.length() - 1) : mount;
    if (!path.startsWith(base)) {
      return path;
    }
    String rest = path.substring(base.length());
    return rest.isEmpty() ? "/" : rest;
  }

  /** The {@code Allow} header of each path the router serves: its methods, in a stable order. */
  private static Map<String, String> allowedMethods(Router router) {
    Map<String, Set<String>> methods = new HashMap<>();
    for (Route route : router.getRoutes()) {
      if (route.getPath() != null && route.methods() != null) {
        route.methods().forEach(m -> methods.computeIfAbsent(route.getPath(), p -> new TreeSet<>()).add(m.name()));
      }
    }
    Map<String, String> allow = new HashMap<>();
    methods.forEach((path, names) -> allow.put(path, String.join(", ", names)));
    return allow;
  }

  /**
   * Records every request by route and status, also when a failure handler answered it (the route is
   * its path, not the handler that answered); other paths count as one route, so cardinality stays
   * bounded.
   */
  private static void measure(RoutingContext ctx, HttpListener listener, Set<String> routePaths) {
    long start = System.nanoTime();
    ctx.addEndHandler(v -> {
      String path = routePath(ctx);
      String route = path != null && routePaths.contains(path) ? path : "unmatched";
      listener.request(route, ctx.response().getStatusCode(), System.nanoTime() - start);
    });
    ctx.next();
  }

  /**
   * Requests Netty could not decode (header or request line too long, bad framing) get the JSON
   * envelope too, unless they were pipelined behind a request framed by a transfer coding.
   */
  public void invalidRequest(HttpServerRequest request) {
    if (transferCodings.fenced(request.connection())) {
      request.response().reset();
      return;
    }
    Throwable cause = request.decoderResult().cause();
    AckpointError error = cause instanceof TooLongHttpHeaderException ? AckpointError.HEADERS_TOO_LARGE
        : cause instanceof TooLongHttpLineException ? AckpointError.URI_TOO_LONG : AckpointError.BAD_REQUEST;
    request.response().putHeader(HttpHeaders.CONNECTION, "close");
    Responses.error(request.response(), error, "the request could not be read: "
        + (error == AckpointError.BAD_REQUEST ? "malformed HTTP" : error.description()));
  }

  /** JSON routes take {@code application/json} (or no content type, as some clients send none). */
  private static void requireJsonContentType(RoutingContext ctx) {
    String type = ctx.request().getHeader(HttpHeaders.CONTENT_TYPE);
    if (type != null) {
      String mime = type.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
      if (!mime.equals("application/json") && !mime.isEmpty()) {
        Responses.error(ctx.response(), AckpointError.UNSUPPORTED_MEDIA_TYPE);
        return;
      }
    }
    ctx.next();
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
