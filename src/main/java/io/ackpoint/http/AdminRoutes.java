package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/** Operator routes, behind {@code admin.token}: 403 while no token is configured, 401 for a wrong one. */
final class AdminRoutes {

  private static final DeliveryOptions COMPACTION = new DeliveryOptions().setSendTimeout(10 * 60_000);

  private final EventBus eventBus;
  private final String compactionAddress;
  private final byte[] token;

  AdminRoutes(EventBus eventBus, String compactionAddress, String token) {
    this.eventBus = eventBus;
    this.compactionAddress = compactionAddress;
    this.token = token == null || token.isEmpty() ? null : token.getBytes(StandardCharsets.UTF_8);
  }

  void authorize(RoutingContext ctx) {
    if (token == null) {
      Responses.error(ctx.response(), AckpointError.ADMIN_DISABLED);
      return;
    }
    String header = ctx.request().getHeader(HttpHeaders.AUTHORIZATION);
    byte[] given = header != null && header.startsWith("Bearer ")
        ? header.substring("Bearer ".length()).getBytes(StandardCharsets.UTF_8) : new byte[0];
    if (!MessageDigest.isEqual(token, given)) {
      Responses.error(ctx.response(), AckpointError.ADMIN_UNAUTHORIZED);
      return;
    }
    ctx.next();
  }

  /** {@code POST /admin/compact}: one compaction now; answers what it deleted and what remains. */
  void compact(RoutingContext ctx) {
    eventBus.<JsonObject>request(compactionAddress, null, COMPACTION).onComplete(ar -> {
      if (ar.succeeded()) {
        Responses.data(ctx.response(), ar.result().body());
      } else {
        Responses.error(ctx.response(), ar.cause());
      }
    });
  }
}
