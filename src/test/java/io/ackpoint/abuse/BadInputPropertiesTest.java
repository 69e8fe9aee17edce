package io.ackpoint.abuse;

import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Property-based abuse of every input of the checkpoint routes: whatever arrives, the answer is never
 * a 5xx, a rejected request stores nothing, and no event loop is ever blocked.
 */
class BadInputPropertiesTest {

  private static final Set<Integer> EXPECTED = Set.of(200, 400, 401, 405, 413, 415, 431);

  private static Vertx vertx;
  private static RunningAckpoint app;
  private static ApiClient api;
  private static Sql sql;
  private static String token;
  private static final List<String> blocked = new CopyOnWriteArrayList<>();

  @BeforeContainer
  static void start() {
    // An event loop busy for more than 500 ms at a time counts as blocked; none may be.
    vertx = Vertx.vertx(new VertxOptions()
        .setMaxEventLoopExecuteTime(500).setMaxEventLoopExecuteTimeUnit(TimeUnit.MILLISECONDS)
        .setBlockedThreadCheckInterval(50).setBlockedThreadCheckIntervalUnit(TimeUnit.MILLISECONDS));
    ((VertxInternal) vertx).blockedThreadChecker().setThreadBlockedHandler(event -> blocked.add(event.toString()));
    app = RunningAckpoint.fresh(vertx, config -> config);
    api = app.api;
    sql = app.sql;
    token = TestKeys.token(vertx, "fuzz");
  }

  @AfterContainer
  static void stop() {
    app.close();
    Await.result(vertx.close());
    assertEquals(List.of(), blocked, "the blocked-thread checker saw an event loop blocked");
  }

  /** Sends {@code body} and checks the invariant: a known 4xx (nothing stored) or a 200 for a valid request. */
  private static void check(HttpResponse<Buffer> response, long rowsBefore) {
    int status = response.statusCode();
    assertTrue(status < 500, "5xx for input: " + status + " " + response.bodyAsString());
    assertTrue(EXPECTED.contains(status), "unexpected status " + status);
    if (status != 200) {
      assertEquals(rowsBefore, sql.checkpointRows(), "a rejected request stored something");
      assertTrue(response.bodyAsJsonObject().getJsonObject("error").getString("code").startsWith("ACK_"));
    }
  }

  @Property(tries = 300)
  void anyStringAsABodyIsNeverA5xx(@ForAll String body) {
    long before = sql.checkpointRows();
    check(api.checkpointRequest(token, body), before);
  }

  @Property(tries = 300)
  void anyJsonValueAsTheIdIsValidatedWithoutA5xx(@ForAll("jsonValues") Object id, @ForAll("clientIds") Object clientId) {
    long before = sql.checkpointRows();
    String body = new JsonObject().put("client_id", clientId).put("checkpoint_request_id", id).encode();
    HttpResponse<Buffer> response = api.checkpointRequest(token, body);
    check(response, before);
  }

  @Property(tries = 200)
  void anyBytesAsABodyAreNeverA5xx(@ForAll byte[] body) {
    long before = sql.checkpointRows();
    HttpResponse<Buffer> response = ApiClient.send(api.request(HttpMethod.POST, "/sync/checkpoint-request")
        .putHeader("Authorization", "Token " + token).putHeader("content-type", "application/json"), Buffer.buffer(body));
    check(response, before);
  }

  @Property(tries = 200)
  void anyClientIdInTheQueryIsNeverA5xx(@ForAll String clientId) {
    long before = sql.checkpointRows();
    HttpResponse<Buffer> response = api.writeCheckpoint2(token, clientId);
    check(response, before);
  }

  @Property(tries = 200)
  void garbageAuthorizationHeadersAreRefused(@ForAll("authorizations") String authorization) {
    long before = sql.checkpointRows();
    HttpResponse<Buffer> response = ApiClient.send(api.request(HttpMethod.GET, "/write-checkpoint2.json")
        .putHeader("Authorization", authorization), null);
    check(response, before);
    assertTrue(response.statusCode() == 401 || response.statusCode() == 431 || response.statusCode() == 400,
        "garbage credentials were accepted: " + authorization);
  }

  @Property(tries = 20)
  void deeplyNestedJsonIsA400(@ForAll("depths") int depth) {
    long before = sql.checkpointRows();
    String body = "{\"checkpoint_request_id\":" + "[".repeat(depth) + "]".repeat(depth) + "}";
    HttpResponse<Buffer> response = api.checkpointRequest(token, body);
    check(response, before);
    assertTrue(response.statusCode() == 400 || response.statusCode() == 413);
  }

  @Provide
  Arbitrary<Integer> depths() {
    return Arbitraries.integers().between(1, 8000);
  }

  @Provide
  Arbitrary<String> authorizations() {
    Arbitrary<String> junk = Arbitraries.strings().ofMinLength(0).ofMaxLength(300).ascii()
        .filter(s -> s.chars().noneMatch(c -> c < 32 || c == 127));
    Arbitrary<String> segments = Arbitraries.strings().withCharRange('A', 'z').ofMaxLength(60);
    Arbitrary<String> jwtLike = net.jqwik.api.Combinators.combine(segments, segments, segments).as((a, b, c) -> "Bearer " + a + "." + b + "." + c);
    return Arbitraries.oneOf(junk.map(s -> "Token " + s), junk, jwtLike, Arbitraries.just("Token " + "a".repeat(20_000)));
  }

  @Provide
  Arbitrary<Object> jsonValues() {
    Arbitrary<Object> scalars = Arbitraries.oneOf(
        Arbitraries.longs().map(l -> (Object) l),
        Arbitraries.doubles().map(d -> (Object) d),
        Arbitraries.strings().ofMaxLength(30).map(s -> (Object) s),
        Arbitraries.strings().numeric().ofMaxLength(25).map(s -> (Object) s),
        Arbitraries.of(true, false).map(b -> (Object) b),
        Arbitraries.just(null));
    return Arbitraries.oneOf(scalars,
        scalars.list().ofMaxSize(3).map(l -> (Object) new JsonArray(l)),
        scalars.map(v -> (Object) new JsonObject().put("id", v)));
  }

  @Provide
  Arbitrary<Object> clientIds() {
    return Arbitraries.oneOf(
        Arbitraries.strings().ofMaxLength(300).map(s -> (Object) s),
        Arbitraries.longs().map(l -> (Object) l),
        Arbitraries.just(null));
  }
}
