package io.ackpoint.http;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.AckpointError;
import io.ackpoint.CheckpointRequests;
import io.ackpoint.core.CheckpointCommand;
import io.ackpoint.core.CheckpointCommands;
import io.ackpoint.core.CheckpointCreated;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.LocalCodec;
import io.ackpoint.core.StrictJson;
import io.ackpoint.core.Utf8;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code GET /write-checkpoint2.json}, {@code POST /sync/checkpoint-request} (optionally awaiting its
 * acknowledgement) and the legacy {@code GET /write-checkpoint.json}: each validates, then hands the
 * checkpoint to the batcher over the event bus. Invalid input throws an {@code AckpointException},
 * which the router's failure handler answers with its status.
 */
final class CheckpointRoutes {

  private final EventBus eventBus;
  private final AckpointAddresses addresses;
  private final AckSubscribers subscribers;
  private final Duration maxWait;
  private final CheckpointSubmitter batcher;
  private final DeliveryOptions toSource;
  private final DeliveryOptions legacyWait;
  private final Set<Promise<JsonObject>> legacyWaits = new HashSet<>();

  /**
   * A request waits for the batcher as long as the batcher keeps it ({@code batching.request_timeout}).
   * Must be created on the event loop that serves the routes.
   */
  CheckpointRoutes(Vertx vertx, HttpSettings settings, AckSubscribers subscribers) {
    this.eventBus = vertx.eventBus();
    this.addresses = settings.addresses();
    this.subscribers = subscribers;
    this.maxWait = settings.config().acknowledgement().maxWait();
    this.batcher = new CheckpointSubmitter(vertx.getOrCreateContext(), eventBus, addresses.checkpointSubmit(),
        LocalCodec.register(vertx, CheckpointCommands.class).setSendTimeout(settings.config().batching().requestTimeout().toMillis()),
        settings.config().batching().enabled());
    // The source's statements are bounded by its own timeouts; this only keeps a lost reply from hanging.
    this.toSource = new DeliveryOptions().setLocalOnly(true).setSendTimeout(settings.config().batching().requestTimeout().toMillis());
    this.legacyWait = new DeliveryOptions().setLocalOnly(true)
        .setSendTimeout(settings.config().acknowledgement().legacyTimeout().toMillis() + 10_000);
  }

  /**
   * {@code GET /write-checkpoint.json}: waits until replication has passed a fresh head (504 on
   * timeout). The request leaves its checkpointing slot once the marker is written: the rest is
   * waiting, and waiters that kept their slots would keep every other request out while
   * replication lags.
   */
  void writeCheckpointLegacy(RoutingContext ctx) {
    Promise<JsonObject> answer = Promise.promise();
    legacyWaits.add(answer);
    eventBus.<JsonObject>request(addresses.headMark(), null, toSource)
        .compose(marked -> {
          Admission.leave(ctx);
          return eventBus.<JsonObject>request(addresses.headAwait(), marked.body(), legacyWait);
        })
        .map(reply -> new JsonObject().put("checkpoint", reply.body().getString("checkpoint")))
        .onComplete(ar -> {
          if (ar.succeeded()) {
            answer.tryComplete(ar.result());
          } else {
            answer.tryFail(ar.cause());
          }
        });
    respond(ctx, answer.future().andThen(done -> legacyWaits.remove(answer)));
  }

  /**
   * Shutdown: legacy requests still waiting for replication answer 503 (retry elsewhere) rather
   * than have their connections closed unanswered when the grace ends; their wait (up to
   * legacy_timeout) is longer than the grace. Used on the event loop of the routes.
   */
  void endLegacyWaits() {
    for (Promise<JsonObject> wait : List.copyOf(legacyWaits)) {
      wait.tryFail(AckpointError.UNAVAILABLE.exception("Ackpoint is shutting down: retry"));
    }
  }

  void writeCheckpoint2(RoutingContext ctx) {
    String clientId = CheckpointRequests.clientId(StrictQuery.param(ctx, "client_id"));
    CheckpointCommand command = CheckpointCommand.generated(Authentication.fullUserId(ctx, clientId));
    respond(ctx, create(command).map(created -> new JsonObject()
        .put("write_checkpoint", Long.toString(created.writeCheckpoint()))));
  }

  void checkpointRequest(RoutingContext ctx) {
    JsonObject body = jsonBody(ctx);
    String clientId = CheckpointRequests.clientId(body.getValue("client_id"));
    long id = CheckpointRequests.checkpointRequestId(body.getValue("checkpoint_request_id"));
    CheckpointCommand command = CheckpointCommand.requested(Authentication.fullUserId(ctx, clientId), id);
    long waitMillis = waitMillis(StrictQuery.param(ctx, "wait"));
    if (waitMillis == 0) {
      respond(ctx, create(command).map(created -> new JsonObject()
          .put("checkpoint_request_id", Long.toString(created.writeCheckpoint()))));
      return;
    }
    createAndAwait(ctx, command, waitMillis);
  }

  private static void respond(RoutingContext ctx, Future<JsonObject> data) {
    data.onComplete(ar -> {
      if (ar.succeeded()) {
        Responses.data(ctx.response(), ar.result());
      } else {
        Responses.error(ctx.response(), ar.cause());
      }
    });
  }

  /**
   * Beyond the reference: the answer comes once the checkpoint is acknowledged (or the wait is over),
   * with {@code "acknowledged": true|false}, saving a client the stream round trip. The waiter
   * subscribes before the checkpoint is created, so an acknowledgement that comes before the batch
   * answers is not missed; a checkpoint the batch found already processed (a retry) is acknowledged
   * at once, since no new event will tell of it. Once the checkpoint is stored the request leaves its
   * checkpointing slot: waiting for replication is not work, and while replication lags, waiters
   * that kept their slots would keep every other checkpoint request out.
   */
  private void createAndAwait(RoutingContext ctx, CheckpointCommand command, long waitMillis) {
    FullUserId user = command.user();
    AckWaiter waiter = new AckWaiter(System.currentTimeMillis() + waitMillis);
    subscribers.add(user, waiter);
    ctx.addEndHandler(v -> waiter.cancel());
    Future<JsonObject> answer = create(command).compose(created -> {
      Admission.leave(ctx);
      long id = created.writeCheckpoint();
      Future<String> acknowledged = created.pending() ? waiter.until(id) : currentCheckpoint(user);
      return acknowledged.map(checkpoint -> {
        JsonObject data = new JsonObject().put("checkpoint_request_id", Long.toString(id)).put("acknowledged", checkpoint != null);
        if (checkpoint != null) {
          data.put("checkpoint", checkpoint);
        }
        return data;
      });
    });
    respond(ctx, answer.andThen(ar -> subscribers.remove(user, waiter)));
  }

  /** The checkpoint sequence to report for an id acknowledged earlier: known here, or asked once after a start. */
  private Future<String> currentCheckpoint(FullUserId user) {
    long known = subscribers.latestCheckpoint();
    return known > 0 ? Future.succeededFuture(Long.toString(known))
        : StreamRoutes.latest(eventBus, addresses, user).map(latest -> latest.getString("checkpoint"));
  }

  private long waitMillis(String wait) {
    if (wait == null || wait.isEmpty()) {
      return 0;
    }
    if (!wait.matches("\\d+")) {
      throw AckpointError.INVALID_WAIT.exception();
    }
    // Seven digits or more (11 days and beyond, past a long from 19) is no wait a client means.
    long millis = wait.length() > 6 ? Long.MAX_VALUE : Long.parseLong(wait) * 1000;
    if (millis > maxWait.toMillis()) {
      throw AckpointError.INVALID_WAIT.exception("wait must be at most " + maxWait.toSeconds() + " seconds");
    }
    return millis;
  }

  static JsonObject jsonBody(RoutingContext ctx) {
    if (ctx.body() == null || ctx.body().isEmpty()) {
      throw AckpointError.INVALID_JSON.exception();
    }
    byte[] bytes = ctx.body().buffer().getBytes();
    if (!Utf8.isWellFormed(bytes)) {
      throw AckpointError.INVALID_JSON.exception("the request body is not well-formed UTF-8");
    }
    Object parsed;
    try {
      parsed = StrictJson.parse(bytes);
    } catch (IllegalArgumentException e) {
      throw AckpointError.INVALID_JSON.exception("the request body " + e.getMessage());
    }
    if (!(parsed instanceof JsonObject object)) {
      throw AckpointError.INVALID_JSON.exception();
    }
    return object;
  }

  /** Validated input goes to the batcher as a record on the internal address: no second parse. */
  private Future<CheckpointCreated> create(CheckpointCommand command) {
    return batcher.submit(command);
  }
}
