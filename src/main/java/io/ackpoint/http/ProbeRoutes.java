package io.ackpoint.http;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.core.ReplicationStatus;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Liveness answers while the process serves HTTP and can still do its job without a restart (503
 * with the reason once its embedded database has stopped, which only a restart brings back).
 * Readiness is true only while something can be acknowledged: storage and source answer (asked of the
 * batcher) and replication progress can reach the acknowledgement engine (asked of the follower, or
 * without one of the acknowledgement verticle). When not ready, {@code reason} says why in one line.
 * Startup answers once Ackpoint has started, which it has whenever its routes answer at all: an
 * orchestrator that restarts a container whose start-up probe fails must not restart one that
 * started and waits, not ready, for a database or a setting to be put right (its readiness says
 * which); a restart would change nothing but lose that reason.
 */
final class ProbeRoutes {

  private static final DeliveryOptions HEALTH_DELIVERY = new DeliveryOptions().setSendTimeout(5_000);

  private final EventBus eventBus;
  private final AckpointAddresses addresses;
  private final Supplier<String> livenessProblem;

  ProbeRoutes(EventBus eventBus, AckpointAddresses addresses, Supplier<String> livenessProblem) {
    this.eventBus = eventBus;
    this.addresses = addresses;
    this.livenessProblem = livenessProblem;
  }

  void liveness(RoutingContext ctx) {
    String problem = livenessProblem.get();
    if (problem == null) {
      Responses.data(ctx.response(), new JsonObject().put("alive", true));
    } else {
      Responses.send(ctx.response(), 503,
          new JsonObject().put("data", new JsonObject().put("alive", false).put("reason", problem)).encode());
    }
  }

  void startup(RoutingContext ctx) {
    Responses.data(ctx.response(), new JsonObject().put("started", true));
  }

  void readiness(RoutingContext ctx) {
    Future<JsonObject> databases = eventBus.<JsonObject>request(addresses.health(), null, HEALTH_DELIVERY)
        .map(reply -> reply.body())
        .otherwise(new JsonObject().put("storage", false).put("source", false));
    Future<ReplicationStatus> replication = eventBus.<JsonObject>request(addresses.healthReplication(), null, HEALTH_DELIVERY)
        .map(reply -> ReplicationStatus.fromJson(reply.body()))
        .otherwise(e -> ReplicationStatus.notReady("the replication status is unknown: " + e.getMessage()));
    Future.join(databases, replication).onComplete(ar -> {
      boolean storage = databases.result().getBoolean("storage", false);
      boolean source = databases.result().getBoolean("source", false);
      List<String> reasons = new ArrayList<>();
      if (!storage) {
        reasons.add(databases.result().getString("storage_problem", "storage does not answer"));
      }
      if (!source) {
        reasons.add("the source does not answer");
      }
      if (!replication.result().ready()) {
        reasons.add(replication.result().reason());
      }
      boolean ready = reasons.isEmpty();
      JsonObject data = new JsonObject().put("ready", ready).put("storage", storage).put("source", source)
          .put("replication", replication.result().ready());
      if (!ready) {
        data.put("reason", String.join("; ", reasons));
      }
      Responses.send(ctx.response(), ready ? 200 : 503, new JsonObject().put("data", data).encode());
    });
  }
}
