package io.ackpoint.abuse;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ackpoint.AckpointError;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.RawJson;
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
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Property-based abuse of every input of the checkpoint routes: whatever arrives, the answer is never
 * a 5xx, a rejected request stores nothing, and no event loop is ever blocked. Correctly signed tokens
 * with headers and claims of every JSON type and size are accepted or refused with an authentication
 * code, never anything else.
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

  private static final Set<String> AUTH_CODES = Arrays.stream(AckpointError.values())
      .filter(e -> e.code().startsWith("ACK_AUTH_")).map(AckpointError::code).collect(Collectors.toSet());
  private static final String TRUSTED_HEADER = new JsonObject().put("alg", "HS256").put("typ", "JWT").put("kid", TestKeys.KID).encode();
  private static final BigDecimal LAST_NUMERIC_DATE = BigDecimal.valueOf(253402300799L);
  /** Reads JSON text the way the numbers are written, so that the oracle sees 1e400 or 2^64 as they are. */
  private static final ObjectMapper EXACT = new ObjectMapper()
      .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS, DeserializationFeature.USE_BIG_INTEGER_FOR_INTS);

  @Property(tries = 400)
  void anyCorrectlySignedClaimsAreAcceptedOrA401WithItsCode(@ForAll("claimMembers") Map<String, String> members) throws Exception {
    String claims = RawJson.object(TestKeys.claims("fuzz-claims"), members);
    if (authenticate(TestKeys.handMade(TRUSTED_HEADER, claims, TestKeys.SECRET))) {
      assertAcceptable(EXACT.readTree(claims), claims);
    }
  }

  @Property(tries = 300)
  void anyCorrectlySignedHeaderIsAcceptedOrA401WithItsCode(@ForAll("headerMembers") Map<String, String> members) throws Exception {
    String header = RawJson.object(new JsonObject(TRUSTED_HEADER), members);
    if (authenticate(TestKeys.handMade(header, TestKeys.claims("fuzz-header").encode(), TestKeys.SECRET))) {
      JsonNode h = EXACT.readTree(header);
      assertEquals("HS256", h.path("alg").textValue(), header);
      assertTrue(!h.has("crit"), header);
      assertTrue(!h.has("kid") || TestKeys.KID.equals(h.get("kid").textValue()), header);
      assertTrue(!h.has("typ") || h.get("typ").isTextual(), header);
    }
  }

  /**
   * Authenticates with {@code token} over HTTP and checks the invariant: accepted, or a 401 with one of
   * the authentication codes (or 431 when the token is beyond the header size limit). True if accepted.
   */
  private static boolean authenticate(String token) {
    long before = sql.checkpointRows();
    HttpResponse<Buffer> response = api.writeCheckpoint2(token, "c");
    check(response, before);
    int status = response.statusCode();
    if (status == 431) {
      assertTrue(token.length() > 7000, "431 for a token of " + token.length() + " chars");
      Statistics.collect("too large for a header");
      return false;
    }
    assertTrue(status == 200 || status == 401, "status " + status + " for token " + token);
    assertTrue(status == 200 || AUTH_CODES.contains(ApiClient.errorCode(response)), response.bodyAsString());
    Statistics.collect(status == 200 ? "accepted" : ApiClient.errorCode(response));
    return status == 200;
  }

  /** What an accepted token's claims must be: a NumericDate exp not passed, sane nbf/iat, our audience, a storable sub. */
  private static void assertAcceptable(JsonNode claims, String text) {
    BigDecimal now = BigDecimal.valueOf(Instant.now().getEpochSecond());
    BigDecimal slack = BigDecimal.valueOf(300);
    JsonNode exp = claims.get("exp");
    assertTrue(exp != null && exp.isNumber(), text);
    assertTrue(exp.decimalValue().compareTo(now.subtract(slack)) > 0 && exp.decimalValue().compareTo(LAST_NUMERIC_DATE) <= 0, text);
    for (String name : List.of("nbf", "iat")) {
      JsonNode date = claims.get(name);
      assertTrue(date == null || (date.isNumber() && date.decimalValue().signum() >= 0
          && date.decimalValue().compareTo(now.add(slack)) < 0), text);
    }
    JsonNode aud = claims.path("aud");
    boolean ours = TestKeys.AUDIENCE.equals(aud.textValue());
    for (JsonNode item : aud.isArray() ? aud : List.<JsonNode>of()) {
      ours |= TestKeys.AUDIENCE.equals(item.textValue());
    }
    assertTrue(ours, text);
    String sub = claims.path("sub").textValue();
    assertTrue(sub != null && !sub.isEmpty() && sub.indexOf('\u0000') < 0, text);
    assertTrue(StandardCharsets.UTF_8.newEncoder().canEncode(sub), "unpaired surrogate accepted: " + text);
    assertTrue(sub.getBytes(StandardCharsets.UTF_8).length <= 1024, text);
  }

  @Provide
  Arbitrary<Map<String, String>> claimMembers() {
    Arbitrary<String> names = Arbitraries.frequencyOf(
        Tuple.of(4, Arbitraries.of("exp", "nbf", "iat", "sub", "aud")),
        Tuple.of(1, Arbitraries.strings().ofMaxLength(8)));
    return Arbitraries.maps(names, memberValues()).ofMinSize(1).ofMaxSize(3);
  }

  @Provide
  Arbitrary<Map<String, String>> headerMembers() {
    Arbitrary<String> names = Arbitraries.frequencyOf(
        Tuple.of(4, Arbitraries.of("alg", "kid", "typ", "crit")),
        Tuple.of(1, Arbitraries.of("cty", "b64", "x5c", "jku", "jwk", "nonce", "zip", "enc")),
        Tuple.of(1, Arbitraries.strings().ofMaxLength(8)));
    Arbitrary<String> plausible = Arbitraries.of("HS256", "hs256", "none", "RS256", "ES256", TestKeys.KID, "JWT", "at+jwt")
        .map(RawJson::quote);
    return Arbitraries.maps(names, Arbitraries.oneOf(memberValues(), plausible)).ofMinSize(1).ofMaxSize(3);
  }

  /** JSON text of any type and size for a member value, or {@link RawJson#ABSENT} to leave the member out. */
  private static Arbitrary<String> memberValues() {
    Arbitrary<String> deep = Arbitraries.integers().between(1, 1500).map(depth -> "[".repeat(depth) + "]".repeat(depth));
    return Arbitraries.frequencyOf(
        Tuple.of(4, jsonNumbers()),
        Tuple.of(3, jsonStrings()),
        Tuple.of(2, jsonValues(3)),
        Tuple.of(1, Arbitraries.just(RawJson.ABSENT)),
        Tuple.of(1, deep));
  }

  private static Arbitrary<String> jsonValues(int depth) {
    Arbitrary<String> scalars = Arbitraries.oneOf(jsonNumbers(), jsonStrings(), Arbitraries.of("true", "false", "null"));
    if (depth == 0) {
      return scalars;
    }
    Arbitrary<String> inner = jsonValues(depth - 1);
    return Arbitraries.oneOf(scalars,
        inner.list().ofMaxSize(4).map(items -> "[" + String.join(",", items) + "]"),
        Arbitraries.maps(Arbitraries.strings().ofMaxLength(6), inner).ofMaxSize(3).map(m -> RawJson.object(new JsonObject(), m)));
  }

  /** Numbers in every notation JSON allows, around the NumericDate range and beyond what long and double hold. */
  private static Arbitrary<String> jsonNumbers() {
    long now = Instant.now().getEpochSecond();
    BigInteger twoTo64 = BigInteger.TWO.pow(64);
    return Arbitraries.oneOf(
        Arbitraries.longs().map(String::valueOf),
        Arbitraries.longs().between(-7200, 7200).map(delta -> Long.toString(now + delta)),
        Arbitraries.doubles().between(-7200, 7200).map(delta -> Double.toString(now + delta)),
        Arbitraries.doubles().filter(Double::isFinite).map(String::valueOf),
        Arbitraries.bigIntegers().between(twoTo64.pow(2).negate(), twoTo64.pow(2)).map(BigInteger::toString),
        Arbitraries.longs().between(-7200, 7200).map(delta -> twoTo64.add(BigInteger.valueOf(now + delta)).toString()),
        Arbitraries.of("1e300", "1e400", "-1e400", "1e-400", "-0", "0", "0.0", "1E-7", "1.5e9", "253402300799",
            "253402300799.999", "253402300800", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
            "1" + "0".repeat(999)));
  }

  /** Strings of any chars: unicode, U+0000 and other controls, unpaired surrogates, and lengths around the sub limit. */
  private static Arbitrary<String> jsonStrings() {
    return Arbitraries.oneOf(
        Arbitraries.strings().ofMaxLength(40),
        Arbitraries.strings().withCharRange('\u0000', '\u001f').withCharRange('\ud800', '\udfff').withChars('a', '\u00e9', '"', '\\')
            .ofMaxLength(20),
        Arbitraries.strings().withCharRange('a', 'z').ofMinLength(1010).ofMaxLength(1040),
        Arbitraries.strings().withCharRange('\u0080', '\u07ff').ofMinLength(505).ofMaxLength(520),
        Arbitraries.of("", "fuzz", TestKeys.AUDIENCE, "HS256", Long.toString(Instant.now().getEpochSecond() + 3600)))
        .map(RawJson::quote);
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
