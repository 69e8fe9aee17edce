package io.ackpoint.http;

import io.ackpoint.EventBusAddresses;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/** Liveness answers while the process serves HTTP; readiness asks the batcher whether its databases answer. */
final class ProbeRoutes {

  private static final DeliveryOptions HEALTH_DELIVERY = new DeliveryOptions().setSendTimeout(5_000);

  private final EventBus eventBus;

  ProbeRoutes(EventBus eventBus) {
    this.eventBus = eventBus;
  }

  void liveness(RoutingContext ctx) {
    Responses.data(ctx.response(), new JsonObject().put("alive", true));
  }

  void readiness(RoutingContext ctx) {
    eventBus.<JsonObject>request(EventBusAddresses.HEALTH, null, HEALTH_DELIVERY).onComplete(ar -> {
      JsonObject status = ar.succeeded() ? ar.result().body() : new JsonObject().put("storage", false).put("source", false);
      boolean ready = status.getBoolean("storage", false) && status.getBoolean("source", false);
      JsonObject data = status.copy().put("ready", ready);
      Responses.send(ctx.response(), ready ? 200 : 503, new JsonObject().put("data", data).encode());
    });
  }
}
