package io.ackpoint.http;

import io.ackpoint.AckpointException;
import io.ackpoint.batch.BatcherVerticle;
import io.ackpoint.batch.CheckpointRequestValidation;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * {@code GET /write-checkpoint2.json} and {@code POST /sync/checkpoint-request}: both validate, then
 * hand the checkpoint to the batcher over the event bus.
 */
final class CheckpointRoutes {

  private static final DeliveryOptions DELIVERY = new DeliveryOptions().setSendTimeout(30_000);

  private final EventBus eventBus;

  CheckpointRoutes(EventBus eventBus) {
    this.eventBus = eventBus;
  }

  void writeCheckpoint2(RoutingContext ctx) {
    String clientId;
    try {
      clientId = CheckpointRequestValidation.clientId(ctx.request().getParam("client_id"));
    } catch (AckpointException e) {
      Responses.error(ctx.response(), e);
      return;
    }
    JsonObject command = new JsonObject().put("user_id", Authentication.user(ctx).userId());
    if (clientId != null) {
      command.put("client_id", clientId);
    }
    create(command).onComplete(ar -> {
      if (ar.succeeded()) {
        Responses.data(ctx.response(), new JsonObject().put("write_checkpoint", ar.result().getString("write_checkpoint")));
      } else {
        Responses.error(ctx.response(), AckpointException.from(ar.cause()));
      }
    });
  }

  void checkpointRequest(RoutingContext ctx) {
    JsonObject command;
    try {
      command = checkpointRequestCommand(ctx);
    } catch (AckpointException e) {
      Responses.error(ctx.response(), e);
      return;
    }
    create(command).onComplete(ar -> {
      if (ar.succeeded()) {
        Responses.data(ctx.response(), new JsonObject().put("checkpoint_request_id", ar.result().getString("write_checkpoint")));
      } else {
        Responses.error(ctx.response(), AckpointException.from(ar.cause()));
      }
    });
  }

  private static JsonObject checkpointRequestCommand(RoutingContext ctx) {
    JsonObject body = jsonBody(ctx);
    String clientId = CheckpointRequestValidation.clientId(body.getValue("client_id"));
    long id = CheckpointRequestValidation.checkpointRequestId(body.getValue("checkpoint_request_id"));
    JsonObject command = new JsonObject()
        .put("user_id", Authentication.user(ctx).userId())
        .put("checkpoint_request_id", Long.toString(id));
    if (clientId != null) {
      command.put("client_id", clientId);
    }
    return command;
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

  private Future<JsonObject> create(JsonObject command) {
    return eventBus.<JsonObject>request(BatcherVerticle.CREATE_ADDRESS, command, DELIVERY).map(msg -> msg.body());
  }
}
