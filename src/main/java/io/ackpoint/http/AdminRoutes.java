package io.ackpoint.http;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.AckpointError;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Operator routes, behind {@code admin.token}: 403 while no token is configured, 401 for a wrong one.
 * {@code GET /admin/status} tells of this node (whether it follows replication, the cluster as it
 * sees it, the slot's lag and retained WAL); {@code POST /admin/compact} runs a compaction.
 */
final class AdminRoutes {

  /** As for the client routes (RFC 9110 section 11.1): the scheme in any case, one or more spaces, nothing after the token. */
  private static final Pattern BEARER = Pattern.compile("^Bearer +(\\S+)$", Pattern.CASE_INSENSITIVE);
  private static final DeliveryOptions COMPACTION = new DeliveryOptions().setSendTimeout(10 * 60_000);
  private static final DeliveryOptions STATUS = new DeliveryOptions().setSendTimeout(15_000);

  private final EventBus eventBus;
  private final AckpointAddresses addresses;
  private final byte[] token;

  AdminRoutes(EventBus eventBus, AckpointAddresses addresses, String token) {
    this.eventBus = eventBus;
    this.addresses = addresses;
    this.token = token == null || token.isEmpty() ? null : token.getBytes(StandardCharsets.UTF_8);
  }

  void authorize(RoutingContext ctx) {
    if (token == null) {
      Responses.error(ctx.response(), AckpointError.ADMIN_DISABLED);
      return;
    }
    String header = ctx.request().getHeader(HttpHeaders.AUTHORIZATION);
    Matcher bearer = header == null ? null : BEARER.matcher(header);
    byte[] given = bearer != null && bearer.matches() ? bearer.group(1).getBytes(StandardCharsets.UTF_8) : new byte[0];
    if (!MessageDigest.isEqual(token, given) || Authentication.moreThanOneCredential(ctx)) {
      ctx.response().putHeader("WWW-Authenticate", "Bearer");
      Responses.error(ctx.response(), AckpointError.ADMIN_UNAUTHORIZED);
      return;
    }
    ctx.next();
  }

  /** {@code POST /admin/compact}: one compaction now; answers what it deleted and what remains. */
  void compact(RoutingContext ctx) {
    relay(ctx, addresses.compactionRun(), COMPACTION);
  }

  /** {@code GET /admin/status}: this node, the cluster as it sees it, the replication slot, the databases. */
  void status(RoutingContext ctx) {
    relay(ctx, addresses.nodeStatus(), STATUS);
  }

  private void relay(RoutingContext ctx, String address, DeliveryOptions options) {
    eventBus.<JsonObject>request(address, null, options).onComplete(ar -> {
      if (ar.succeeded()) {
        Responses.data(ctx.response(), ar.result().body());
      } else {
        Responses.error(ctx.response(), ar.cause());
      }
    });
  }
}
