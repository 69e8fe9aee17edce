package io.ackpoint.http;

import io.ackpoint.support.ApiClient;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Browsers call Ackpoint across origins: preflights answered, CORS headers on the routes clients use. */
@ExtendWith(VertxExtension.class)
class CorsTest {

  private RunningAckpoint app;

  @AfterEach
  void stop() {
    app.close();
  }

  private HttpResponse<Buffer> preflight(String path, String origin) {
    return ApiClient.send(app.api.request(HttpMethod.OPTIONS, path)
        .putHeader("Origin", origin)
        .putHeader("Access-Control-Request-Method", "POST")
        .putHeader("Access-Control-Request-Headers", "authorization, content-type, x-user-agent, user-agent"), null);
  }

  @Test
  void aPreflightIsAnsweredForAnyOriginByDefault(Vertx vertx) {
    app = RunningAckpoint.fresh(vertx, config -> config);
    HttpResponse<Buffer> response = preflight("/sync/stream", "https://app.example");
    assertTrue(response.statusCode() / 100 == 2, "status " + response.statusCode());
    assertEquals("*", response.getHeader("Access-Control-Allow-Origin"));
    List<String> allowed = List.of(response.getHeader("Access-Control-Allow-Headers").toLowerCase().split("\\s*,\\s*"));
    // user-agent: a browser that lets a script set it (Firefox) asks for it.
    assertTrue(allowed.containsAll(List.of("authorization", "content-type", "x-user-agent", "user-agent")), allowed.toString());
    assertTrue(response.getHeader("Access-Control-Allow-Methods").contains("POST"));
  }

  @Test
  void aCheckpointAnswerCarriesTheCorsHeaders(Vertx vertx) {
    app = RunningAckpoint.fresh(vertx, config -> config);
    HttpResponse<Buffer> response = ApiClient.send(app.api.request(HttpMethod.GET, "/write-checkpoint2.json?client_id=c")
        .putHeader("Origin", "https://app.example")
        .putHeader("Authorization", "Token " + TestKeys.token(vertx, "web")), null);
    assertEquals(200, response.statusCode());
    assertEquals("*", response.getHeader("Access-Control-Allow-Origin"));
    assertTrue(response.getHeader("Access-Control-Expose-Headers").toLowerCase().contains("retry-after"));
  }

  @Test
  void onlyConfiguredOriginsAreAllowedWhenTheListIsGiven(Vertx vertx) {
    app = RunningAckpoint.fresh(vertx, config -> {
      config.getJsonObject("http").put("cors", new io.vertx.core.json.JsonObject()
          .put("allowed_origins", new JsonArray().add("https://app.example")));
      return config;
    });
    assertEquals("https://app.example", preflight("/sync/checkpoint-request", "https://app.example").getHeader("Access-Control-Allow-Origin"));
    HttpResponse<Buffer> foreign = preflight("/sync/checkpoint-request", "https://evil.example");
    assertNull(foreign.getHeader("Access-Control-Allow-Origin"));
    // The client's refusal, in the JSON envelope: not a fault of Ackpoint's (it was answered 500).
    assertEquals(403, foreign.statusCode(), foreign.bodyAsString());
    assertEquals("ACK_FORBIDDEN", foreign.bodyAsJsonObject().getJsonObject("error").getString("code"));
  }
}
