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

  private final Router router;
  private final AckSubscribers subscribers;
  private final Authenticator authenticator;
  private final TransferCodings transferCodings;
  private final CheckpointRoutes checkpoints;
  private final AtomicBoolean closed;
  private final HttpListener listener;

  private HttpApi(Router router, AckSubscribers subscribers, Authenticator authenticator, TransferCodings transferCodings,
                  CheckpointRoutes checkpoints, AtomicBoolean closed, HttpListener listener) {
    this.router = router;
    this.closed = closed;
    this.listener = listener;
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
    HomeLoop homeLoop = new HomeLoop(vertx);
    AckSubscribers subscribers = new AckSubscribers(vertx, settings.addresses().positionHeard());
    return subscribers.start()
        .compose(v -> settings.authenticators().create(vertx))
        .map(authenticator -> {
          TransferCodings transferCodings = new TransferCodings();
          CheckpointRoutes checkpoints = new CheckpointRoutes(vertx, settings, subscribers);
          AtomicBoolean closed = new AtomicBoolean();
          Router router = router(vertx, homeLoop, settings, subscribers, authenticator, transferCodings, checkpoints, closed);
          return new HttpApi(router, subscribers, authenticator, transferCodings, checkpoints, closed, settings.listener());
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

  private static Router router(Vertx vertx, HomeLoop homeLoop, HttpSettings settings, AckSubscribers subscribers, Authenticator authenticator,
                               TransferCodings transferCodings, CheckpointRoutes checkpoints, AtomicBoolean closed) {
    AckpointConfig config = settings.config();
    Router router = Router.router(vertx);
    router.route().handler(RequestEnd::watch);
    router.route().handler(homeLoop);
    // Then: a request pipelined behind one framed by a transfer coding is answered by nothing.
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
    router.route().handler(transferCodings);
    router.route().handler(HttpApi::requireOneHost);
    router.route().handler(new BodyDeadline(vertx, config.http().idleTimeout()));
    // After the body's deadline: a refusal answered while a body still trickles in would otherwise
    // hold its connection for as long as the bytes keep coming.
    router.route().handler(RequestTarget::check);
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
      MetricsVerticle.route(router, settings.metricsText());
    }

    ProbeRoutes probes = new ProbeRoutes(vertx.eventBus(), settings.addresses(), settings.livenessProblem());
    // HEAD too: some load balancers' health checks send it; nothing else that is safe to repeat needs it.
    router.route("/probes/liveness").method(HttpMethod.GET).method(HttpMethod.HEAD).handler(probes::liveness);
    router.route("/probes/readiness").method(HttpMethod.GET).method(HttpMethod.HEAD).handler(probes::readiness);
    router.route("/probes/startup").method(HttpMethod.GET).method(HttpMethod.HEAD).handler(probes::startup);

    allowed.putAll(allowedMethods(router));
    // Unmatched requests and failures are answered by a route and a failure handler of this router
    // rather than by its error handlers: a host that mounts the router into its own
    // (Ackpoint#createRouter) would answer them, since Vert.x consults only the outer router's error
    // handlers, in plain text (a 500 and an ERROR line for any client's bad body).
    router.route().handler(ctx -> unmatched(ctx, allowed));
    FailureResponses.install(router, config.http().bodyLimit());
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

  /** The path as this router matched it, without the host's mount point; null if it is no route's spelling. */
  private static String routePath(RoutingContext ctx) {
    String path = CanonicalPath.of(ctx);
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

  /** The status a request is counted under when its connection closed before any answer. */
  static final int NO_ANSWER = 0;

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
      // A connection that closed before any answer (a client that hung up mid-body, framing the
      // decoder refused) has the response's default status, 200: such a request is counted as 0,
      // not as a success of its route.
      int status = ctx.response().headWritten() ? ctx.response().getStatusCode() : NO_ANSWER;
      listener.request(route, status, System.nanoTime() - start);
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
    request.response().putHeader(HttpHeaders.CONNECTION, "close").putHeader(HttpHeaders.DATE, HttpDate.now());
    // Counted before it is answered: no route of the router saw it, so none counts it.
    listener.request("unmatched", error.status(), 0);
    Responses.error(request.response(), error, "the request could not be read: "
        + (error == AckpointError.BAD_REQUEST ? "malformed HTTP" : error.description()));
  }

  /**
   * RFC 9112 section 3.2: a request with more than one Host is refused, and its connection closed:
   * a proxy in front may have routed it by the other one.
   */
  private static void requireOneHost(RoutingContext ctx) {
    if (ctx.request().headers().getAll(HttpHeaders.HOST).size() > 1) {
      Responses.lastOnItsConnection(ctx);
      Responses.error(ctx.response(), AckpointError.BAD_REQUEST, "more than one Host header");
      return;
    }
    ctx.next();
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


}
