package io.ackpoint.http;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.CheckpointRequests;
import io.ackpoint.auth.AuthenticatedUser;
import io.ackpoint.core.FullUserId;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * The acknowledgement streams: {@code POST /sync/stream} (PowerSync, NDJSON) and
 * {@code GET /sse/checkpoints} (server-sent events). A stream sees only its own full user id and
 * ends when its token expires.
 */
final class StreamRoutes {

  private static final String ACCEL_BUFFERING = "X-Accel-Buffering";

  private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true).setSendTimeout(10_000);
  private static final StreamFormat POWERSYNC = new StreamFormat.PowerSync();
  private static final StreamFormat SSE = new StreamFormat.ServerSentEvents();

  private final EventBus eventBus;
  private final AckpointAddresses addresses;
  private final AckSubscribers subscribers;
  private final long keepaliveMillis;
  private final HttpListener listener;

  StreamRoutes(EventBus eventBus, HttpSettings settings, AckSubscribers subscribers) {
    this.eventBus = eventBus;
    this.addresses = settings.addresses();
    this.subscribers = subscribers;
    this.keepaliveMillis = settings.config().acknowledgement().keepaliveInterval().toMillis();
    this.listener = settings.listener();
  }

  void syncStream(RoutingContext ctx) {
    JsonObject body = ctx.body() == null || ctx.body().isEmpty() ? new JsonObject() : CheckpointRoutes.jsonBody(ctx);
    open(ctx, CheckpointRequests.clientId(body.getValue("client_id")), POWERSYNC);
  }

  void serverSentEvents(RoutingContext ctx) {
    open(ctx, CheckpointRequests.clientId(StrictQuery.param(ctx, "client_id")), SSE);
  }

  private void open(RoutingContext ctx, String clientId, StreamFormat format) {
    AuthenticatedUser user = Authentication.user(ctx);
    FullUserId fullUserId = Authentication.fullUserId(ctx, clientId);
    HttpServerResponse response = ctx.response();
    response.setChunked(true)
        .putHeader(HttpHeaders.CONTENT_TYPE, format.contentType())
        .putHeader(HttpHeaders.CACHE_CONTROL, "no-cache")
        // A reverse proxy that buffers responses (nginx does by default) would hold a stream's short
        // lines until kilobytes had gathered: the client would hear its acknowledgement late.
        .putHeader(ACCEL_BUFFERING, "no");
    listener.streamOpened();
    AckStream stream = new AckStream(response, format, user.expiresAt().toEpochMilli(), keepaliveMillis, ended -> {
      subscribers.remove(fullUserId, ended);
      listener.streamClosed();
    });
    // Subscribe first, then read: an acknowledgement between the two is kept by the stream.
    subscribers.add(fullUserId, stream);
    ctx.addEndHandler(v -> stream.end());
    latest(eventBus, addresses, fullUserId).onComplete(ar -> {
      if (ar.succeeded()) {
        JsonObject latest = ar.result();
        String id = latest.getString("write_checkpoint");
        // At least the sequence this event loop has heard: a position it heard before the stream
        // subscribed may not have reached the acknowledgement verticle when that answered (another
        // thread), while storage already holds its ids; they are not told at an earlier sequence.
        long sequence = Math.max(Long.parseLong(latest.getString("checkpoint")), subscribers.latestCheckpoint());
        stream.open(Long.toString(sequence), id == null ? null : Long.parseLong(id));
      } else {
        Responses.error(response, ar.cause());
        stream.end();
      }
    });
  }

  /** The latest acknowledged id of a full user id ({@code write_checkpoint}, absent if none) and the checkpoint sequence. */
  static Future<JsonObject> latest(EventBus eventBus, AckpointAddresses addresses, FullUserId user) {
    JsonObject query = new JsonObject().put("user_id", user.userId()).put("client_id", user.clientId());
    return eventBus.<JsonObject>request(addresses.checkpointLatest(), query, LOCAL)
        .map(msg -> msg.body());
  }
}
