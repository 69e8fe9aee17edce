package io.ackpoint.http;

import io.ackpoint.support.Await;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.RawJson;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.interfaces.RSAPublicKey;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import static io.ackpoint.support.ApiClient.errorCode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SPEC section 2, authentication: each failure is a 401 with its own code, and nothing is stored. */
@ExtendWith(VertxExtension.class)
class AuthenticationTest {

  private static Vertx vertx;
  private static RunningAckpoint app;
  private static ApiClient api;
  private static Sql sql;
  private static KeyPair rsa;

  @BeforeAll
  static void start() throws Exception {
    vertx = Vertx.vertx();
    KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
    generator.initialize(2048);
    rsa = generator.generateKeyPair();
    // An RS256 key beside the HS256 one, to show that neither can stand in for the other.
    app = RunningAckpoint.fresh(vertx, config -> {
      config.getJsonObject("auth").getJsonObject("jwks").getJsonArray("keys").add(rsaJwk((RSAPublicKey) rsa.getPublic()));
      return config;
    });
    api = app.api;
    sql = app.sql;
  }

  @AfterAll
  static void stop() {
    app.close();
    Await.result(vertx.close());
  }

  private static JsonObject rsaJwk(RSAPublicKey key) {
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    return new JsonObject().put("kty", "RSA").put("kid", "rsa-key").put("alg", "RS256").put("use", "sig")
        .put("n", b64.encodeToString(unsigned(key.getModulus().toByteArray())))
        .put("e", b64.encodeToString(unsigned(key.getPublicExponent().toByteArray())));
  }

  private static byte[] unsigned(byte[] bytes) {
    return bytes[0] == 0 ? java.util.Arrays.copyOfRange(bytes, 1, bytes.length) : bytes;
  }

  private static String rs256(JsonObject claims) throws Exception {
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    String input = b64.encodeToString(new JsonObject().put("alg", "RS256").put("typ", "JWT").put("kid", "rsa-key").encode().getBytes())
        + "." + b64.encodeToString(claims.encode().getBytes());
    Signature signature = Signature.getInstance("SHA256withRSA");
    signature.initSign(rsa.getPrivate());
    signature.update(input.getBytes());
    return input + "." + b64.encodeToString(signature.sign());
  }

  private static HttpResponse<Buffer> send(String authorization) {
    var request = api.request(HttpMethod.GET, "/write-checkpoint2.json").addQueryParam("client_id", "c1");
    if (authorization != null) {
      request.putHeader("Authorization", authorization);
    }
    return ApiClient.send(request, null);
  }

  private HttpResponse<Buffer> assertRejected(String authorization, String code) {
    long before = sql.checkpointRows();
    HttpResponse<Buffer> response = send(authorization);
    assertEquals(401, response.statusCode(), response.bodyAsString());
    assertEquals(code, errorCode(response));
    assertEquals(before, sql.checkpointRows(), "nothing is stored");
    return response;
  }

  /** Rejected with {@code code}, and the description names {@code what} (the claim or header parameter at fault). */
  private void assertRejected(String authorization, String code, String what) {
    String description = assertRejected(authorization, code).bodyAsJsonObject().getJsonObject("error").getString("description");
    assertTrue(description.contains(what), description);
  }

  private static void assertAccepted(String authorization) {
    HttpResponse<Buffer> response = send(authorization);
    assertEquals(200, response.statusCode(), response.bodyAsString());
    sql.query("DELETE FROM ackpoint_write_checkpoints");
  }

  private static final String HS256_HEADER = new JsonObject().put("alg", "HS256").put("typ", "JWT").put("kid", TestKeys.KID).encode();

  /** A correctly signed token: the test claims with claim {@code name} set to the JSON text {@code raw}. */
  private static String withClaim(String name, String raw) {
    return "Token " + TestKeys.handMade(HS256_HEADER, RawJson.object(TestKeys.claims("raw-claims"), Map.of(name, raw)), TestKeys.SECRET);
  }

  /** A correctly signed token with valid claims: the HS256 header with parameter {@code name} set to the JSON text {@code raw}. */
  private static String withHeader(String name, String raw) {
    String header = RawJson.object(new JsonObject(HS256_HEADER), Map.of(name, raw));
    return "Token " + TestKeys.handMade(header, TestKeys.claims("raw-header").encode(), TestKeys.SECRET);
  }

  private static long now() {
    return Instant.now().getEpochSecond();
  }

  @Test
  void validTokenIsAcceptedAsTokenOrBearer() {
    String token = TestKeys.token(vertx, "auth-ok");
    assertEquals(200, api.writeCheckpoint2(token, "c1").statusCode());
    var bearer = api.request(HttpMethod.GET, "/write-checkpoint2.json").putHeader("Authorization", "Bearer " + token);
    assertEquals(200, ApiClient.send(bearer, null).statusCode());
    sql.query("DELETE FROM ackpoint_write_checkpoints");
  }

  @Test
  void theSchemeIsCaseInsensitiveAndMaySpaceOutTheToken() {
    String token = TestKeys.token(vertx, "auth-scheme");
    for (String authorization : new String[] {"bearer " + token, "TOKEN " + token, "Bearer  " + token}) {
      assertAccepted(authorization);
    }
  }

  @Test
  void rs256TokenFromTheConfiguredRsaKeyIsAccepted() throws Exception {
    assertEquals(200, api.writeCheckpoint2(rs256(TestKeys.claims("rsa-user")), "c1").statusCode());
    sql.query("DELETE FROM ackpoint_write_checkpoints");
  }

  @Test
  void missingAuthorizationIs401Missing() {
    assertRejected(null, "ACK_AUTH_MISSING");
    assertRejected("Basic dXNlcjpwYXNz", "ACK_AUTH_MISSING");
  }

  @Test
  void twoAuthorizationHeadersAre401MalformedEvenWhenEachIsValid() {
    long before = sql.checkpointRows();
    var request = api.request(HttpMethod.GET, "/write-checkpoint2.json").addQueryParam("client_id", "c1");
    request.headers().add("Authorization", "Token " + TestKeys.token(vertx, "first-user"))
        .add("Authorization", "Token " + TestKeys.token(vertx, "second-user"));
    HttpResponse<Buffer> response = ApiClient.send(request, null);
    assertEquals(401, response.statusCode(), response.bodyAsString());
    assertEquals("ACK_AUTH_MALFORMED", errorCode(response));
    assertEquals(before, sql.checkpointRows(), "nothing is stored");
  }

  @Test
  void aTokenWhoseClaimsAreNotWellFormedUtf8Is401Malformed() {
    String claims = TestKeys.claims("SUBJECT").encode();
    int at = claims.indexOf("SUBJECT");
    // sub "/" spelled in two bytes (C0 AF): an overlong form, which the JSON parser reads as "/".
    byte[] overlong = Buffer.buffer(claims.substring(0, at)).appendBytes(new byte[] {(byte) 0xC0, (byte) 0xAF})
        .appendString(claims.substring(at + "SUBJECT".length())).getBytes();
    assertRejected("Token " + TestKeys.handMade(HS256_HEADER.getBytes(StandardCharsets.UTF_8), overlong,
        TestKeys.SECRET), "ACK_AUTH_MALFORMED", "UTF-8");
  }

  /** One token, one string: other spellings of a valid signature are refused, though they decode to it. */
  @Test
  void aSignatureWrittenAnotherWayThanAJwtWritesItIs401Malformed() {
    String token = TestKeys.handMade(HS256_HEADER, TestKeys.claims("spelled").encode(), TestKeys.SECRET);
    assertAccepted("Token " + token);
    assertRejected("Token " + token + "=", "ACK_AUTH_MALFORMED", "no padding");
    String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char last = token.charAt(token.length() - 1);
    // 32 bytes take 43 characters, whose last 2 bits are unused: flipping one changes no byte.
    char sameBytes = alphabet.charAt(alphabet.indexOf(last) ^ 1);
    assertRejected("Token " + token.substring(0, token.length() - 1) + sameBytes, "ACK_AUTH_MALFORMED", "unused bits zero");
  }

  /** Of two members of one name, the verifier keeps one and a gateway or log in front may keep the other. */
  @Test
  void aTokenWhoseHeaderOrClaimsAreNotStrictJsonIs401Malformed() {
    String claims = TestKeys.claims("first").encode();
    String twoSubs = claims.substring(0, claims.length() - 1) + ",\"sub\":\"second\"}";
    assertRejected("Token " + TestKeys.handMade(HS256_HEADER, twoSubs, TestKeys.SECRET), "ACK_AUTH_MALFORMED", "names a member twice");
    String twoAlgs = HS256_HEADER.substring(0, HS256_HEADER.length() - 1) + ",\"alg\":\"HS256\"}";
    assertRejected("Token " + TestKeys.handMade(twoAlgs, claims, TestKeys.SECRET), "ACK_AUTH_MALFORMED", "names a member twice");
    String commented = "/* c */" + claims;
    assertRejected("Token " + TestKeys.handMade(HS256_HEADER, commented, TestKeys.SECRET), "ACK_AUTH_MALFORMED", "not valid JSON");
  }

  /** Identity providers put a user's groups in the token: 8 KB of headers (Vert.x's default) is not enough. */
  @Test
  void aTokenListingManyGroupsFitsAndHeadersBeyond16KbAreA431() {
    io.vertx.core.json.JsonArray groups = new io.vertx.core.json.JsonArray();
    for (int i = 0; i < 300; i++) {
      groups.add("group-of-the-organisation-" + i);
    }
    String token = TestKeys.handMade(HS256_HEADER, TestKeys.claims("member").put("groups", groups).encode(), TestKeys.SECRET);
    assertTrue(token.length() > 10_000, "a token of " + token.length() + " characters");
    assertAccepted("Token " + token);
    HttpResponse<Buffer> tooLarge = ApiClient.send(api.request(HttpMethod.GET, "/write-checkpoint2.json?client_id=c")
        .putHeader("Authorization", "Token " + token).putHeader("X-Padding", "x".repeat(16 * 1024)), null);
    assertEquals(431, tooLarge.statusCode());
    assertEquals("ACK_HEADERS_TOO_LARGE", errorCode(tooLarge));
  }

  @Test
  void malformedTokenIs401Malformed() {
    assertRejected("Token not-a-jwt", "ACK_AUTH_MALFORMED");
    assertRejected("Token a.b.c", "ACK_AUTH_MALFORMED");
  }

  @Test
  void tokenSignedWithAnotherSecretIs401BadSignature() {
    String forged = TestKeys.sign(vertx, TestKeys.KID, TestKeys.OTHER_SECRET, TestKeys.claims("mallory"));
    assertRejected("Token " + forged, "ACK_AUTH_BAD_SIGNATURE");
  }

  @Test
  void tamperedPayloadIs401BadSignature() {
    String[] parts = TestKeys.token(vertx, "alice").split("\\.");
    String otherPayload = TestKeys.token(vertx, "mallory").split("\\.")[1];
    assertRejected("Token " + parts[0] + "." + otherPayload + "." + parts[2], "ACK_AUTH_BAD_SIGNATURE");
  }

  @Test
  void expiredTokenIs401Expired() {
    JsonObject claims = TestKeys.claims("late").put("iat", now() - 7200).put("exp", now() - 3600);
    assertRejected("Token " + TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET, claims), "ACK_AUTH_EXPIRED");
  }

  @Test
  void tokenWithoutExpIs401Expired() {
    JsonObject claims = TestKeys.claims("forever");
    claims.remove("exp");
    assertRejected("Token " + TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET, claims), "ACK_AUTH_EXPIRED");
  }

  @Test
  void notYetValidTokenIs401NotYetValid() {
    JsonObject claims = TestKeys.claims("early").put("nbf", now() + 3600);
    assertRejected("Token " + TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET, claims), "ACK_AUTH_NOT_YET_VALID");
  }

  @Test
  void wrongAudienceIs401WrongAudience() {
    JsonObject claims = TestKeys.claims("elsewhere").put("aud", "another-service");
    assertRejected("Token " + TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET, claims), "ACK_AUTH_WRONG_AUDIENCE");
    claims.put("aud", new JsonArray().add("x").add("y"));
    assertRejected("Token " + TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET, claims), "ACK_AUTH_WRONG_AUDIENCE");
  }

  @Test
  void unknownKeyIdIs401UnknownKey() {
    String token = TestKeys.sign(vertx, "some-other-kid", TestKeys.SECRET, TestKeys.claims("who"));
    assertRejected("Token " + token, "ACK_AUTH_UNKNOWN_KEY");
  }

  @Test
  void algNoneIsRejected() {
    JsonObject header = new JsonObject().put("alg", "none").put("typ", "JWT");
    assertRejected("Token " + TestKeys.handMade(header, TestKeys.claims("root"), null), "ACK_AUTH_UNSUPPORTED_ALGORITHM");
    JsonObject withKid = header.copy().put("kid", TestKeys.KID);
    assertRejected("Token " + TestKeys.handMade(withKid, TestKeys.claims("root"), null), "ACK_AUTH_UNSUPPORTED_ALGORITHM");
  }

  @Test
  void hs256SignedWithTheRsaPublicKeyIsRejected() {
    // Algorithm confusion: an HS256 token whose HMAC secret is the RSA public key, naming the RSA key.
    String publicKeyAsSecret = Base64.getUrlEncoder().withoutPadding().encodeToString(rsa.getPublic().getEncoded());
    JsonObject header = new JsonObject().put("alg", "HS256").put("typ", "JWT").put("kid", "rsa-key");
    String token = TestKeys.handMade(header, TestKeys.claims("confused"), publicKeyAsSecret);
    assertRejected("Token " + token, "ACK_AUTH_BAD_SIGNATURE");
  }

  @Test
  void emptyOrMissingSubjectIs401InvalidSubject() {
    JsonObject claims = TestKeys.claims("");
    assertRejected("Token " + TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET, claims), "ACK_AUTH_INVALID_SUBJECT");
    claims.put("sub", 42);
    assertRejected("Token " + TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET, claims), "ACK_AUTH_INVALID_SUBJECT");
  }

  @Test
  void anExpTooLargeForAnInstantIs401MalformedNot500() {
    assertRejected(withClaim("exp", "1e300"), "ACK_AUTH_MALFORMED", "exp");
    assertRejected(withClaim("exp", "1e400"), "ACK_AUTH_MALFORMED", "exp");
  }

  @Test
  void timeClaimsThatAreNotNumbersAre401Malformed() {
    for (String claim : List.of("exp", "nbf", "iat")) {
      for (String raw : List.of("\"" + (now() + 3600) + "\"", "null", "true", "[" + (now() + 3600) + "]", "{}")) {
        assertRejected(withClaim(claim, raw), "ACK_AUTH_MALFORMED", claim);
      }
    }
  }

  @Test
  void aBigIntegerExpDoesNotWrapAroundIntoTheFuture() {
    BigInteger wrapsToAnHourFromNow = BigInteger.TWO.pow(64).add(BigInteger.valueOf(now() + 3600));
    assertRejected(withClaim("exp", wrapsToAnHourFromNow.toString()), "ACK_AUTH_MALFORMED", "exp");
    assertRejected(withClaim("nbf", BigInteger.TWO.pow(64).negate().toString()), "ACK_AUTH_MALFORMED", "nbf");
  }

  @Test
  void timeClaimsOutsideYears1970To9999Are401Malformed() {
    assertRejected(withClaim("exp", "253402300800"), "ACK_AUTH_MALFORMED", "exp");
    assertRejected(withClaim("exp", "-1"), "ACK_AUTH_MALFORMED", "exp");
    assertRejected(withClaim("iat", "-0.5"), "ACK_AUTH_MALFORMED", "iat");
    assertRejected(withClaim("nbf", "1e20"), "ACK_AUTH_MALFORMED", "nbf");
  }

  @Test
  void fractionalAndExponentNumericDatesAreAccepted() {
    assertAccepted(withClaim("exp", (now() + 3600) + ".5"));
    // now + 1 h (or - 1 min) with its ten digits as a mantissa: exact.
    assertAccepted(withClaim("exp", exponentForm(now() + 3600, "e")));
    assertAccepted(withClaim("iat", exponentForm(now() - 60, "E")));
    assertAccepted(withClaim("nbf", "-0"));
    // A NumericDate up to the year 9999 is read; valid for longer than auth.max_token_lifetime, it is refused for that.
    assertRejected(withClaim("exp", "253402300799"), "ACK_AUTH_TOO_LONG_LIVED", "auth.max_token_lifetime");
  }

  /** {@code seconds} (ten digits) as d.ddddddddd followed by {@code e} and 9. */
  private static String exponentForm(long seconds, String e) {
    String digits = Long.toString(seconds);
    return digits.charAt(0) + "." + digits.substring(1) + e + "9";
  }

  @Test
  void aSubjectThatStorageCannotHoldExactlyIs401InvalidSubject() {
    // Java would encode U+0000 and unpaired surrogates as '?' on the way to storage: different subs, one user.
    assertRejected(withClaim("sub", RawJson.quote("a\u0000b")), "ACK_AUTH_INVALID_SUBJECT");
    assertRejected(withClaim("sub", RawJson.quote("user\ud800")), "ACK_AUTH_INVALID_SUBJECT");
    assertRejected(withClaim("sub", RawJson.quote("\udc00user")), "ACK_AUTH_INVALID_SUBJECT");
    assertRejected(withClaim("sub", RawJson.quote("x".repeat(1025))), "ACK_AUTH_INVALID_SUBJECT");
    assertRejected(withClaim("sub", RawJson.quote("\u00e9".repeat(513))), "ACK_AUTH_INVALID_SUBJECT");
  }

  @Test
  void aSubjectOf1024Utf8BytesIsAccepted() {
    assertAccepted(withClaim("sub", RawJson.quote("\u00e9".repeat(512))));
    assertAccepted(withClaim("sub", RawJson.quote("\ud83d\ude00".repeat(256))));
  }

  @Test
  void aCritHeaderIs401Malformed() {
    // RFC 7515 section 4.1.11: Ackpoint understands no extension, so a token that requires one is invalid.
    assertRejected(withHeader("crit", "[\"exp\"]"), "ACK_AUTH_MALFORMED", "crit");
    assertRejected(withHeader("crit", "[]"), "ACK_AUTH_MALFORMED", "crit");
  }

  @Test
  void headerParametersOfTheWrongTypeAre401Malformed() {
    for (String parameter : List.of("alg", "kid", "typ")) {
      for (String raw : List.of("256", "null", "false", "[\"HS256\"]", "{}")) {
        assertRejected(withHeader(parameter, raw), "ACK_AUTH_MALFORMED", parameter);
      }
    }
  }

  @Test
  void checkpointRequestRouteIsAuthenticatedToo() {
    HttpResponse<Buffer> response = api.checkpointRequest(null, "c1", "5");
    assertEquals(401, response.statusCode());
    assertEquals(0, sql.checkpointRows());
  }
}
