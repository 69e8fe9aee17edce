package io.ackpoint.http;

import io.ackpoint.AckpointException;
import io.ackpoint.EventBusAddresses;
import io.ackpoint.config.AckpointConfig.AcknowledgementConfig;
import io.ackpoint.batch.CheckpointCommand;
import io.ackpoint.batch.CheckpointCreated;
import io.ackpoint.batch.CheckpointRequestValidation;
import io.ackpoint.core.FullUserId;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import java.time.Duration;

/**
 * {@code GET /write-checkpoint2.json} and {@code POST /sync/checkpoint-request}: both validate, then
 * hand the checkpoint to the batcher over the event bus. Invalid input throws an
 * {@link AckpointException}, which the router's failure handler answers with its status.
 */
final class CheckpointRoutes {

  private final EventBus eventBus;
  private final AckSubscribers subscribers;
  private final Duration maxWait;
  private final DeliveryOptions legacyDelivery;
  private final DeliveryOptions delivery;

  /** {@code batcherTimeout}: how long a request waits for the batcher, which gives up on it at the same time. */
  CheckpointRoutes(EventBus eventBus, AckSubscribers subscribers, AcknowledgementConfig config, Duration batcherTimeout) {
    this.eventBus = eventBus;
    this.delivery = new DeliveryOptions().setSendTimeout(batcherTimeout.toMillis());
    this.subscribers = subscribers;
    this.maxWait = config.maxWait();
    this.legacyDelivery = new DeliveryOptions().setSendTimeout(config.legacyTimeout().toMillis() + 10_000);
  }

  /** {@code GET /write-checkpoint.json}: waits until replication has passed a fresh head (504 on timeout). */
  void writeCheckpointLegacy(RoutingContext ctx) {
    eventBus.<JsonObject>request(EventBusAddresses.HEAD_AWAIT, null, legacyDelivery).onComplete(ar -> {
      if (ar.succeeded()) {
        Responses.data(ctx.response(), new JsonObject().put("checkpoint", ar.result().body().getString("checkpoint")));
      } else {
        Responses.error(ctx.response(), AckpointException.from(ar.cause()));
      }
    });
  }

  void writeCheckpoint2(RoutingContext ctx) {
    String clientId = CheckpointRequestValidation.clientId(ctx.request().getParam("client_id"));
    CheckpointCommand command = CheckpointCommand.generated(Authentication.fullUserId(ctx, clientId));
    respond(ctx, create(command).map(created -> new JsonObject()
        .put("write_checkpoint", Long.toString(created.writeCheckpoint()))));
  }

  void checkpointRequest(RoutingContext ctx) {
    CheckpointCommand command = checkpointRequestCommand(ctx);
    long waitMillis = waitMillis(ctx.request().getParam("wait"));
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
        Responses.error(ctx.response(), AckpointException.from(ar.cause()));
      }
    });
  }

  /**
   * Beyond the reference: the answer comes once the checkpoint is acknowledged (or the wait is over),
   * with {@code "acknowledged": true|false}, saving a client the stream round trip.
   */
  private void createAndAwait(RoutingContext ctx, CheckpointCommand command, long waitMillis) {
    FullUserId fullUserId = command.user();
    AckWaiter waiter = new AckWaiter(System.currentTimeMillis() + waitMillis);
    subscribers.add(fullUserId, waiter);
    ctx.addEndHandler(v -> waiter.cancel());
    Future<JsonObject> answer = create(command).compose(created -> {
      long id = created.writeCheckpoint();
      Future<String> acknowledged = waiter.until(id);
      // A retry of an already processed checkpoint produces no new acknowledgement: ask storage.
      StreamRoutes.latest(eventBus, fullUserId).onSuccess(latest -> {
        String acked = latest.getString("write_checkpoint");
        if (acked != null) {
          waiter.acknowledgedAlready(Long.parseLong(acked), latest.getString("checkpoint"));
        }
      });
      return acknowledged.map(checkpoint -> {
        JsonObject data = new JsonObject().put("checkpoint_request_id", Long.toString(id)).put("acknowledged", checkpoint != null);
        if (checkpoint != null) {
          data.put("checkpoint", checkpoint);
        }
        return data;
      });
    });
    respond(ctx, answer.andThen(ar -> subscribers.remove(fullUserId, waiter)));
  }

  private long waitMillis(String wait) {
    if (wait == null || wait.isEmpty()) {
      return 0;
    }
    if (!wait.matches("\\d{1,6}")) {
      throw AckpointException.badRequest("ACK_INVALID_WAIT", "wait must be a whole number of seconds");
    }
    long millis = Long.parseLong(wait) * 1000;
    if (millis > maxWait.toMillis()) {
      throw AckpointException.badRequest("ACK_INVALID_WAIT", "wait must be at most " + maxWait.toSeconds() + " seconds");
    }
    return millis;
  }

  private static CheckpointCommand checkpointRequestCommand(RoutingContext ctx) {
    JsonObject body = jsonBody(ctx);
    String clientId = CheckpointRequestValidation.clientId(body.getValue("client_id"));
    long id = CheckpointRequestValidation.checkpointRequestId(body.getValue("checkpoint_request_id"));
    return CheckpointCommand.requested(Authentication.fullUserId(ctx, clientId), id);
  }


  static JsonObject jsonBody(RoutingContext ctx) {
    if (ctx.body() == null || ctx.body().isEmpty()) {
      throw AckpointException.badRequest("ACK_INVALID_JSON", "the request body must be a JSON object");
    }
    Object parsed;
    try {
      parsed = ctx.body().buffer().toJsonValue();
    } catch (DecodeException e) {
      throw AckpointException.badRequest("ACK_INVALID_JSON", "the request body is not valid JSON");
    }
    if (!(parsed instanceof JsonObject object)) {
      throw AckpointException.badRequest("ACK_INVALID_JSON", "the request body must be a JSON object");
    }
    return object;
  }

  /** Validated input goes to the batcher as a record on the internal address: no second parse. */
  private Future<CheckpointCreated> create(CheckpointCommand command) {
    return eventBus.<CheckpointCreated>request(EventBusAddresses.CHECKPOINT_SUBMIT, command, delivery).map(msg -> msg.body());
  }
}
