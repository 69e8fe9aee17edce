package io.ackpoint.abuse;

import io.ackpoint.support.ApiClient;
import io.ackpoint.support.LogCapture;
import io.ackpoint.support.Await;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Keys from a JWKS URI: fetched at start and periodically, and at once (rate-limited) for a token
 * with an unknown kid or, without a kid, one that no known key verifies. A key rotated in is picked
 * up on its first token; a key removed stops verifying after the next refresh; when the endpoint
 * fails or hangs, known keys keep working, unknown keys fail within the fetch timeout, and the
 * failures are counted and logged.
 */
@ExtendWith(VertxExtension.class)
class JwksEndpointTest {

  enum Mode { UP, DOWN, SLOW, TRICKLE, HUGE, HUGE_CHUNKED }

  private static final String ROTATED_KID = "rotated-in";

  private volatile Mode mode = Mode.UP;
  private volatile JsonObject published = TestKeys.jwks();
  private final AtomicInteger fetches = new AtomicInteger();
  private final Map<Integer, Promise<Void>> arrivals = new ConcurrentHashMap<>();
  private HttpServer jwks;
  private RunningAckpoint app;
  private Vertx vertx;

  @BeforeEach
  void startKeyServer(Vertx vertx) {
    this.vertx = vertx;
    jwks = Await.result(vertx.createHttpServer().requestHandler(req -> {
      arrival(fetches.incrementAndGet()).tryComplete();
      switch (mode) {
        case UP -> req.response().putHeader("content-type", "application/json").end(published.encode());
        case DOWN -> req.response().setStatusCode(503).end();
        case SLOW -> { } // never answers
        // Answers at once, then sends its key set a byte every 50 ms: never idle for the fetch timeout.
        case TRICKLE -> trickle(req.response().setChunked(true).putHeader("content-type", "application/json"),
            Buffer.buffer(published.encode()));
        // A key set of valid keys, padded past the size limit, announced or not.
        case HUGE -> req.response().putHeader("content-type", "application/json").end(padded());
        case HUGE_CHUNKED -> req.response().setChunked(true).putHeader("content-type", "application/json").end(padded());
      }
    }).listen(0, "127.0.0.1"));
  }

  private void trickle(HttpServerResponse response, Buffer body) {
    AtomicInteger sent = new AtomicInteger();
    vertx.setPeriodic(50, id -> {
      if (response.closed() || sent.get() == body.length()) {
        vertx.cancelTimer(id);
        if (!response.closed()) {
          response.end();
        }
        return;
      }
      int at = sent.getAndIncrement();
      response.write(body.getBuffer(at, at + 1));
    });
  }

  private String padded() {
    return published.copy().put("padding", "x".repeat(2 * 1024 * 1024)).encode();
  }

  private Promise<Void> arrival(int n) {
    return arrivals.computeIfAbsent(n, k -> Promise.promise());
  }

  /** Completes once the key server has received its {@code n}-th request. */
  private Future<Void> fetchNumber(int n) {
    Promise<Void> arrived = arrival(n);
    if (fetches.get() >= n) {
      arrived.tryComplete();
    }
    return arrived.future();
  }

  private String jwksUri() {
    return "http://127.0.0.1:" + jwks.actualPort() + "/jwks.json";
  }

  /** Ackpoint with only remote keys, on {@code instances} HTTP verticles, each with its own authenticator. */
  private void start(String minFetchInterval, String refreshInterval, int instances) {
    start(minFetchInterval, refreshInterval, instances, new JsonObject());
  }

  /** Ackpoint with the keys {@code inline} and the remote ones. */
  private void start(String minFetchInterval, String refreshInterval, int instances, JsonObject inline) {
    app = RunningAckpoint.fresh(vertx, config -> {
      config.getJsonObject("http").put("instances", instances);
      config.getJsonObject("auth")
          .put("jwks", inline)
          .put("jwks_uri", jwksUri())
          .put("jwks_min_fetch_interval", minFetchInterval)
          .put("jwks_refresh_interval", refreshInterval)
          .put("jwks_fetch_timeout", "300ms");
      return config;
    });
  }

  private void start(String minFetchInterval) {
    start(minFetchInterval, "1h", 2);
  }

  @AfterEach
  void stop() {
    if (app != null) {
      app.close();
    }
    Await.result(jwks.close());
  }

  private String tokenOfKey(String kid, String secret) {
    return TestKeys.sign(vertx, kid, secret, TestKeys.claims("jwks-user"));
  }

  private static String withoutKid(String secret) {
    return TestKeys.handMade(new JsonObject().put("alg", "HS256").put("typ", "JWT"), TestKeys.claims("jwks-user"), secret);
  }

  private static JsonObject onlyTheRotatedKey() {
    return new JsonObject().put("keys", new JsonArray()
        .add(new JsonObject().put("kty", "oct").put("kid", ROTATED_KID).put("alg", "HS256").put("k", TestKeys.OTHER_SECRET)));
  }

  @Test
  void aKeyRotatedInIsPickedUpOnItsFirstToken() {
    start("0s");
    assertEquals(200, app.api.writeCheckpoint2(TestKeys.token(vertx, "jwks-user"), "c").statusCode());
    published = onlyTheRotatedKey();
    assertEquals(200, app.api.writeCheckpoint2(tokenOfKey(ROTATED_KID, TestKeys.OTHER_SECRET), "c").statusCode());
  }

  @Test
  void aTokenWithoutKidIsAcceptedOnceTheEndpointIsUpAfterAFailedFirstFetch() {
    mode = Mode.DOWN;
    start("0s");
    mode = Mode.UP;
    var response = app.api.writeCheckpoint2(withoutKid(TestKeys.SECRET), "c");
    assertEquals(200, response.statusCode(), response.bodyAsString());
  }

  @Test
  void aKeyRemovedFromTheJwksStopsVerifyingAfterThePeriodicRefresh() {
    // One authenticator, so that the key server sees exactly its fetches; none on demand (1h).
    start("1h", "100ms", 1);
    String token = TestKeys.token(vertx, "jwks-user");
    assertEquals(200, app.api.writeCheckpoint2(token, "c").statusCode());
    published = onlyTheRotatedKey();
    // Fetches of one authenticator never overlap: when another one arrives, the first one that
    // served the new set has completed, and its keys are in use.
    Await.result(fetchNumber(fetches.get() + 2));
    var refused = app.api.writeCheckpoint2(token, "c");
    assertEquals(401, refused.statusCode());
    assertEquals("ACK_AUTH_UNKNOWN_KEY", ApiClient.errorCode(refused));
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

  /** The fetch timeout bounds the whole answer, not each wait for a byte: a slow body held the start for good. */
  @Test
  void aKeyServerThatSendsItsBodySlowlyHoldsNeitherTheStartNorARequest() {
    mode = Mode.TRICKLE;
    start("0s");
    var unknown = app.api.writeCheckpoint2(tokenOfKey(ROTATED_KID, TestKeys.OTHER_SECRET), "c");
    assertEquals("ACK_AUTH_UNKNOWN_KEY", ApiClient.errorCode(unknown), unknown.bodyAsString());
    mode = Mode.UP;
    var known = app.api.writeCheckpoint2(TestKeys.token(vertx, "jwks-user"), "c");
    assertEquals(200, known.statusCode(), known.bodyAsString());
  }

  @Test
  void aFloodOfUnknownKeysOrUnverifiableTokensDoesNotFloodTheKeyServer() {
    start("1h");
    int afterStart = fetches.get();
    for (int i = 0; i < 20; i++) {
      assertEquals("ACK_AUTH_UNKNOWN_KEY",
          ApiClient.errorCode(app.api.writeCheckpoint2(tokenOfKey("made-up-" + i, TestKeys.OTHER_SECRET), "c")));
      assertEquals("ACK_AUTH_BAD_SIGNATURE",
          ApiClient.errorCode(app.api.writeCheckpoint2(withoutKid(TestKeys.OTHER_SECRET), "c")));
    }
    assertEquals(afterStart, fetches.get(), "within the minimum fetch interval nothing is fetched again");
  }

  @Test
  void aDocumentThatIsNotAJwksIsAFailedFetchAndTheKnownKeysStay() {
    start("0s");
    List<JsonObject> notJwks = List.of(new JsonObject(), new JsonObject().put("keys", "none"));
    for (int i = 0; i < notJwks.size(); i++) {
      published = notJwks.get(i);
      assertEquals("ACK_AUTH_UNKNOWN_KEY", ApiClient.errorCode(app.api.writeCheckpoint2(tokenOfKey(ROTATED_KID, TestKeys.OTHER_SECRET), "c")));
      var known = app.api.writeCheckpoint2(TestKeys.token(vertx, "jwks-user"), "c");
      assertEquals(200, known.statusCode(), known.bodyAsString());
      assertEquals(i + 1.0, app.ackpoint.meterRegistry().get("ackpoint.jwks.fetch.failures").counter().count());
    }
  }

  @Test
  void aDocumentLargerThanAKeySetHasReasonToBeIsAFailedFetchWhetherItSaysSoOrNot() {
    start("0s");
    published = onlyTheRotatedKey();
    for (Mode huge : List.of(Mode.HUGE, Mode.HUGE_CHUNKED)) {
      mode = huge;
      assertEquals("ACK_AUTH_UNKNOWN_KEY", ApiClient.errorCode(app.api.writeCheckpoint2(tokenOfKey(ROTATED_KID, TestKeys.OTHER_SECRET), "c")),
          huge + ": its keys are not taken");
      var known = app.api.writeCheckpoint2(TestKeys.token(vertx, "jwks-user"), "c");
      assertEquals(200, known.statusCode(), known.bodyAsString());
    }
    assertEquals(2.0, app.ackpoint.meterRegistry().get("ackpoint.jwks.fetch.failures").counter().count());
  }

  /** The verifier keeps one key per kid: a published key named as an inline one replaced it, and its tokens were refused. */
  @Test
  void aPublishedKeyNamedAsAnInlineOneLeavesTheInlineKeyInUse() {
    published = new JsonObject().put("keys", new JsonArray()
        .add(new JsonObject().put("kty", "oct").put("kid", TestKeys.KID).put("alg", "HS256").put("k", TestKeys.OTHER_SECRET)));
    start("0s", "1h", 1, TestKeys.jwks());
    var inline = app.api.writeCheckpoint2(TestKeys.token(vertx, "jwks-user"), "c");
    assertEquals(200, inline.statusCode(), inline.bodyAsString());
    var impostor = app.api.writeCheckpoint2(tokenOfKey(TestKeys.KID, TestKeys.OTHER_SECRET), "c");
    assertEquals("ACK_AUTH_BAD_SIGNATURE", ApiClient.errorCode(impostor), impostor.bodyAsString());
  }

  /** Only an explicit list revokes keys: entries none of which is a key ([1, 2], [{}]) took every remote key away. */
  @Test
  void aSetWhoseEntriesAreNoneOfThemKeysIsAFailedFetchAndTheKnownKeysStay() {
    // One authenticator: each HTTP verticle has its own keys.
    start("0s", "1h", 1);
    published = onlyTheRotatedKey();
    assertEquals(200, app.api.writeCheckpoint2(tokenOfKey(ROTATED_KID, TestKeys.OTHER_SECRET), "c").statusCode());
    for (JsonArray junk : List.of(new JsonArray().add(1).add(2), new JsonArray().add(new JsonObject()), new JsonArray().addNull())) {
      published = new JsonObject().put("keys", junk);
      assertEquals("ACK_AUTH_UNKNOWN_KEY", ApiClient.errorCode(app.api.writeCheckpoint2(tokenOfKey("made-up", TestKeys.OTHER_SECRET), "c")));
      var kept = app.api.writeCheckpoint2(tokenOfKey(ROTATED_KID, TestKeys.OTHER_SECRET), "c");
      assertEquals(200, kept.statusCode(), junk.encode() + ": " + kept.bodyAsString());
    }
  }

  /** Its secret is in Ackpoint's source: whoever publishes it lets anyone sign, whatever address Ackpoint listens on. */
  @Test
  void thePublishedDevelopmentKeyIsLeftOutOfAFetchedSet() {
    start("0s", "1h", 1);
    String developmentSecret = "iJoVKTbQkCatM5bOb3GMzH-irPqiv-EwBnI_6EVtkv0";
    published = onlyTheRotatedKey();
    published.getJsonArray("keys").add(new JsonObject().put("kty", "oct").put("kid", "published-dev").put("alg", "HS256")
        .put("k", developmentSecret));
    var rotated = app.api.writeCheckpoint2(tokenOfKey(ROTATED_KID, TestKeys.OTHER_SECRET), "c");
    assertEquals(200, rotated.statusCode(), rotated.bodyAsString());
    var development = app.api.writeCheckpoint2(tokenOfKey("published-dev", developmentSecret), "c");
    assertEquals("ACK_AUTH_UNKNOWN_KEY", ApiClient.errorCode(development), development.bodyAsString());
  }

  @Test
  void keysThatAreNotJwksAreLeftOutAndTheOthersUsed() {
    start("0s");
    published = onlyTheRotatedKey();
    published.getJsonArray("keys").add(0, "not a key").add(1, new JsonObject().put("kty", "oct").put("kid", 7).put("k", "AAAA"));
    var rotated = app.api.writeCheckpoint2(tokenOfKey(ROTATED_KID, TestKeys.OTHER_SECRET), "c");
    assertEquals(200, rotated.statusCode(), rotated.bodyAsString());
  }

  /** Whoever guesses a secret shorter than its hash (RFC 7518 section 3.2) signs for any user: such a key verifies nothing. */
  @Test
  void aPublishedHmacSecretShorterThanItsHashVerifiesNothing() {
    start("0s");
    String weak = "YWJj";
    published = onlyTheRotatedKey();
    published.getJsonArray("keys").add(new JsonObject().put("kty", "oct").put("kid", "weak").put("alg", "HS256").put("k", weak));
    try (LogCapture log = LogCapture.of("io.ackpoint.auth.FetchFailureLog")) {
      var refused = app.api.writeCheckpoint2(tokenOfKey("weak", weak), "c");
      assertEquals(401, refused.statusCode(), refused.bodyAsString());
      assertTrue(log.messages("WARN").stream().anyMatch(m -> m.contains("has the key weak that is a secret of 3 bytes")),
          log.messages("WARN").toString());
    }
    var rotated = app.api.writeCheckpoint2(tokenOfKey(ROTATED_KID, TestKeys.OTHER_SECRET), "c");
    assertEquals(200, rotated.statusCode(), rotated.bodyAsString());
  }

  @Test
  void failedFetchesAreCountedAndLoggedAtMostOncePerMinute() {
    List<String> warnings;
    try (LogCapture log = LogCapture.of("io.ackpoint.auth.FetchFailureLog")) {
      mode = Mode.DOWN;
      start("0s");
      for (int i = 0; i < 3; i++) {
        app.api.writeCheckpoint2(tokenOfKey("made-up-" + i, TestKeys.OTHER_SECRET), "c");
      }
      warnings = log.messages("WARN");
    }
    String metrics = ApiClient.send(app.api.request(HttpMethod.GET, "/metrics"), null).bodyAsString();
    assertTrue(metrics.contains("ackpoint_jwks_fetch_failures_total " + (double) fetches.get() + "\n"),
        fetches.get() + " failed fetches, metrics: " + metrics.lines().filter(l -> l.contains("jwks")).toList());
    assertTrue(fetches.get() > 1, "several fetches failed");
    assertEquals(1, warnings.stream().filter(line -> line.contains(jwksUri()) && line.contains("503")).count(), warnings.toString());
  }
}
