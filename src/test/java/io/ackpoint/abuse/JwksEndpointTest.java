package io.ackpoint.abuse;

import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Keys from a JWKS URI: a key rotated in is picked up on its first token; when the endpoint fails or
 * hangs, known keys keep working and unknown keys fail within the fetch timeout; fetches are rate-limited.
 */
@ExtendWith(VertxExtension.class)
class JwksEndpointTest {

  enum Mode { UP, DOWN, SLOW }

  private static final String ROTATED_KID = "rotated-in";

  private volatile Mode mode = Mode.UP;
  private volatile JsonObject published = TestKeys.jwks();
  private final AtomicInteger fetches = new AtomicInteger();
  private HttpServer jwks;
  private RunningAckpoint app;
  private Vertx vertx;

  @BeforeEach
  void startKeyServer(Vertx vertx) {
    this.vertx = vertx;
    jwks = Await.result(vertx.createHttpServer().requestHandler(req -> {
      fetches.incrementAndGet();
      switch (mode) {
        case UP -> req.response().putHeader("content-type", "application/json").end(published.encode());
        case DOWN -> req.response().setStatusCode(503).end();
        case SLOW -> { } // never answers
      }
    }).listen(0, "127.0.0.1"));
  }

  private void start(String refreshInterval) {
    app = RunningAckpoint.fresh(vertx, config -> {
      config.getJsonObject("auth")
          .put("jwks", new JsonObject())
          .put("jwks_uri", "http://127.0.0.1:" + jwks.actualPort() + "/jwks.json")
          .put("jwks_refresh_interval", refreshInterval)
          .put("jwks_fetch_timeout", "300ms");
      return config;
    });
  }

  @AfterEach
  void stop() {
    app.close();
    Await.result(jwks.close());
  }

  private String tokenOfKey(String kid, String secret) {
    return TestKeys.sign(vertx, kid, secret, TestKeys.claims("jwks-user"));
  }

  @Test
  void aKeyRotatedInIsPickedUpOnItsFirstToken() {
    start("0s");
    assertEquals(200, app.api.writeCheckpoint2(TestKeys.token(vertx, "jwks-user"), "c").statusCode());
    published = new JsonObject().put("keys", new JsonArray()
        .add(new JsonObject().put("kty", "oct").put("kid", ROTATED_KID).put("alg", "HS256").put("k", TestKeys.OTHER_SECRET)));
    assertEquals(200, app.api.writeCheckpoint2(tokenOfKey(ROTATED_KID, TestKeys.OTHER_SECRET), "c").statusCode());
  }

  @Test
  void whenTheEndpointFailsKnownKeysKeepWorkingAndUnknownKeysAreRefused() {
    start("0s");
    mode = Mode.DOWN;
    int before = fetches.get();
    assertEquals(200, app.api.writeCheckpoint2(TestKeys.token(vertx, "jwks-user"), "c").statusCode());
    var unknown = app.api.writeCheckpoint2(tokenOfKey(ROTATED_KID, TestKeys.OTHER_SECRET), "c");
    assertEquals(401, unknown.statusCode());
    assertEquals("ACK_AUTH_UNKNOWN_KEY", ApiClient.errorCode(unknown));
    assertEquals(before + 1, fetches.get(), "the unknown key was looked up once, and failed");
  }

  @Test
  void whenTheEndpointHangsUnknownKeysFailWithinTheFetchTimeout() {
    start("0s");
    mode = Mode.SLOW;
    int before = fetches.get();
    assertEquals(200, app.api.writeCheckpoint2(TestKeys.token(vertx, "jwks-user"), "c").statusCode());
    var unknown = app.api.writeCheckpoint2(tokenOfKey(ROTATED_KID, TestKeys.OTHER_SECRET), "c");
    assertEquals("ACK_AUTH_UNKNOWN_KEY", ApiClient.errorCode(unknown));
    assertTrue(fetches.get() > before, "the hanging endpoint was asked");
  }

  @Test
  void aFloodOfUnknownKeysDoesNotFloodTheKeyServer() {
    start("1h");
    int afterStart = fetches.get();
    for (int i = 0; i < 20; i++) {
      assertEquals("ACK_AUTH_UNKNOWN_KEY",
          ApiClient.errorCode(app.api.writeCheckpoint2(tokenOfKey("made-up-" + i, TestKeys.OTHER_SECRET), "c")));
    }
    assertEquals(afterStart, fetches.get(), "within the refresh interval nothing is fetched again");
  }
}
