package io.ackpoint.abuse;

import io.ackpoint.Ackpoint;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Keys from a JWKS URI: cached keys keep working when the endpoint is down or slow; unknown keys fail fast. */
@ExtendWith(VertxExtension.class)
class JwksEndpointTest {

  enum Mode { UP, DOWN, SLOW }

  private volatile Mode mode = Mode.UP;
  private HttpServer jwks;
  private Ackpoint ackpoint;
  private ApiClient api;
  private Vertx vertx;

  @BeforeEach
  void start(Vertx vertx) {
    this.vertx = vertx;
    jwks = Await.result(vertx.createHttpServer().requestHandler(req -> {
      switch (mode) {
        case UP -> req.response().putHeader("content-type", "application/json").end(TestKeys.jwks().encode());
        case DOWN -> req.response().setStatusCode(503).end();
        case SLOW -> { } // never answers
      }
    }).listen(0, "127.0.0.1"));
    JsonObject config = TestAckpoint.configJson(TestDatabase.freshDatabase());
    config.getJsonObject("auth").put("jwks", new JsonObject()).put("jwks_uri", "http://127.0.0.1:" + jwks.actualPort() + "/jwks.json");
    ackpoint = Await.result(Ackpoint.start(vertx, TestAckpoint.config(config)));
    api = new ApiClient(vertx, TestAckpoint.portOf(config));
  }

  @AfterEach
  void stop() {
    Await.result(ackpoint.close());
    Await.result(jwks.close());
  }

  private String unknownKeyToken() {
    return TestKeys.sign(vertx, "rotated-away", TestKeys.SECRET, TestKeys.claims("who"));
  }

  @Test
  void tokensSignedWithAPublishedKeyAreAccepted() {
    assertEquals(200, api.writeCheckpoint2(TestKeys.token(vertx, "jwks-user"), "c").statusCode());
  }

  @Test
  void whenTheEndpointIsDownCachedKeysKeepWorkingAndUnknownKeysFailFast() {
    mode = Mode.DOWN;
    assertEquals(200, api.writeCheckpoint2(TestKeys.token(vertx, "jwks-user"), "c").statusCode());
    var unknown = api.writeCheckpoint2(unknownKeyToken(), "c");
    assertEquals(401, unknown.statusCode());
    assertEquals("ACK_AUTH_UNKNOWN_KEY", ApiClient.errorCode(unknown));
  }

  @Test
  void whenTheEndpointHangsCachedKeysKeepWorkingAndUnknownKeysFailFast() {
    mode = Mode.SLOW;
    assertEquals(200, api.writeCheckpoint2(TestKeys.token(vertx, "jwks-user"), "c").statusCode());
    for (int i = 0; i < 5; i++) {
      assertEquals("ACK_AUTH_UNKNOWN_KEY", ApiClient.errorCode(api.writeCheckpoint2(unknownKeyToken(), "c")));
    }
  }
}
