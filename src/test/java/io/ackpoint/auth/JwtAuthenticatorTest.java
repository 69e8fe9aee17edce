package io.ackpoint.auth;

import io.ackpoint.AckpointError;
import io.ackpoint.AckpointException;
import io.ackpoint.config.AckpointConfig.AuthConfig;
import io.ackpoint.config.ConfigException;
import io.ackpoint.support.Await;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.math.BigInteger;
import java.security.KeyPairGenerator;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(VertxExtension.class)
class JwtAuthenticatorTest {

  private static final Duration DAY = Duration.ofHours(24);

  /** A clock the test moves. */
  static final class MovingClock extends Clock {
    Instant now = Instant.now();

    @Override
    public ZoneOffset getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }

  private static AckpointError failure(Future<AuthenticatedUser> result) {
    try {
      Await.result(result);
      return null;
    } catch (AckpointException e) {
      return e.error();
    }
  }

  /**
   * The header is read as the regular expression it was read with before (kept here as the
   * reference): {@code Token} or {@code Bearer} in any ASCII case, spaces, then no whitespace.
   */
  @Test
  void theAuthorizationHeaderIsReadAsTheRegularExpressionReadIt() {
    Pattern reference = Pattern.compile("^(Token|Bearer) +(\\S+)$", Pattern.CASE_INSENSITIVE);
    List<String> schemes = List.of("Token", "token", "TOKEN", "Bearer", "bEaReR", "Tokens", "Toke", "Basic", "", "To\u212Aen",
        " Token", "Token\t");
    List<String> gaps = List.of(" ", "   ", "", "\t", " \t", "\u00a0");
    List<String> tokens = List.of("a.b.c", "", "a b", "a\tb", "abc\n", "x\u00a0y", "é.ü", "a\rb", "a\u000Bb", "a\fb", " ");
    int read = 0;
    for (String scheme : schemes) {
      for (String gap : gaps) {
        for (String token : tokens) {
          String header = scheme + gap + token;
          Matcher m = reference.matcher(header);
          String expected = m.matches() ? m.group(2) : null;
          assertEquals(expected, JwtAuthenticator.credentials(header), () -> "header [" + header + "]");
          read += expected == null ? 0 : 1;
        }
      }
    }
    assertTrue(read > 20, "the cases include valid headers: " + read);
  }

  @Test
  void aVerifiedTokenKeepsBeingCheckedForExpiry(Vertx vertx) {
    MovingClock clock = new MovingClock();
    AuthConfig config = new AuthConfig(List.of(TestKeys.AUDIENCE), TestKeys.jwks(), "", Duration.ofMinutes(5),
        Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(5), DAY);
    JwtAuthenticator authenticator = Await.result(JwtAuthenticator.create(vertx, config, JwksListener.NONE, clock));
    long now = clock.now.getEpochSecond();
    String token = TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET, TestKeys.claims("alice").put("exp", now + 60));

    assertEquals("alice", Await.result(authenticator.authenticate("Token " + token)).userId());
    assertEquals("alice", Await.result(authenticator.authenticate("Bearer " + token)).userId(), "served from the cache");
    clock.now = clock.now.plusSeconds(120);
    assertEquals(AckpointError.AUTH_EXPIRED, failure(authenticator.authenticate("Token " + token)));
  }

  @Test
  void aTokenWithinTheClockSkewIsStillAccepted(Vertx vertx) {
    MovingClock clock = new MovingClock();
    AuthConfig config = new AuthConfig(List.of(TestKeys.AUDIENCE), TestKeys.jwks(), "", Duration.ofMinutes(5),
        Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(30), DAY);
    JwtAuthenticator authenticator = Await.result(JwtAuthenticator.create(vertx, config, JwksListener.NONE, clock));
    long now = clock.now.getEpochSecond();
    String expiredByTen = TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET, TestKeys.claims("bob").put("exp", now - 10));
    assertEquals("bob", Await.result(authenticator.authenticate("Token " + expiredByTen)).userId());
    String notYetByTen = TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET, TestKeys.claims("carol").put("nbf", now + 10));
    assertEquals("carol", Await.result(authenticator.authenticate("Token " + notYetByTen)).userId());
  }

  /** RFC 7518 section 3.2: a secret shorter than the hash is refused at start, whatever the host. */
  @Test
  void aConfiguredHmacSecretShorterThanItsHashIsRefusedNamingItsLength() {
    for (String[] weak : new String[][] {{"HS256", "YWJj"}, {"HS256", "AA"}, {"HS512", TestKeys.SECRET}}) {
      JsonObject key = new JsonObject().put("kty", "oct").put("kid", "weak").put("alg", weak[0]).put("k", weak[1]);
      AuthConfig config = new AuthConfig(List.of(TestKeys.AUDIENCE), new JsonObject().put("keys", new JsonArray().add(key)),
          "", Duration.ofMinutes(5), Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(5), DAY);
      ConfigException refused = assertThrows(ConfigException.class, () -> JwtAuthenticator.requireUsableKeys(config));
      assertTrue(refused.getMessage().contains("auth.jwks") && refused.getMessage().contains("key 1 (kid weak) is a secret of "),
          refused.getMessage());
    }
    JsonObject withoutAlg = new JsonObject().put("kty", "oct").put("k", "YWJj");
    assertThrows(ConfigException.class, () -> JwtAuthenticator.requireUsableKeys(new AuthConfig(List.of(TestKeys.AUDIENCE),
        new JsonObject().put("keys", new JsonArray().add(withoutAlg)), "", Duration.ofMinutes(5), Duration.ZERO,
        Duration.ofSeconds(5), Duration.ofSeconds(5), DAY)), "HS256 is the default of an oct key");
    JwtAuthenticator.requireUsableKeys(new AuthConfig(List.of(TestKeys.AUDIENCE), TestKeys.jwks(), "", Duration.ofMinutes(5),
        Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(5), DAY));
  }

  private static AuthConfig inline(JsonArray keys) {
    return new AuthConfig(List.of(TestKeys.AUDIENCE), new JsonObject().put("keys", keys), "", Duration.ofMinutes(5),
        Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(5), DAY);
  }

  /** An HS256 secret of 32 bytes, different for each {@code i}. */
  private static String secret(int i) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(("secret number " + i + " of this test......").getBytes());
  }

  private static String withoutKid(JsonObject claims, String secret) {
    return TestKeys.handMade(new JsonObject().put("alg", "HS256").put("typ", "JWT"), claims, secret);
  }

  /**
   * Each key a token without a kid is tried against is a signature check on the event loop: a made-up
   * token against a published set of thousands of keys held a loop for seconds. Beyond a few keys of
   * its algorithm, such a token is refused before any check.
   */
  @Test
  void aTokenIsTriedAgainstAFewKeysOfItsAlgorithmAtMost(Vertx vertx) {
    JsonArray keys = new JsonArray();
    for (int i = 0; i < KeySet.MAX_KEYS_TRIED; i++) {
      keys.add(new JsonObject().put("kty", "oct").put("kid", "k" + i).put("alg", "HS256").put("k", secret(i)));
    }
    String signedByTheLast = withoutKid(TestKeys.claims("few"), secret(KeySet.MAX_KEYS_TRIED - 1));
    JwtAuthenticator few = Await.result(JwtAuthenticator.create(vertx, inline(keys.copy()), JwksListener.NONE));
    assertEquals("few", Await.result(few.authenticate("Token " + signedByTheLast)).userId());

    keys.add(new JsonObject().put("kty", "oct").put("kid", "one-more").put("alg", "HS256").put("k", secret(99)));
    JwtAuthenticator many = Await.result(JwtAuthenticator.create(vertx, inline(keys), JwksListener.NONE));
    assertEquals(AckpointError.AUTH_UNKNOWN_KEY, failure(many.authenticate("Token " + signedByTheLast)));
    String named = TestKeys.sign(vertx, "k0", secret(0), TestKeys.claims("named"));
    assertEquals("named", Await.result(many.authenticate("Token " + named)).userId(), "a token that names its key is checked once");

    // A token that names its key is tried against the keys without a kid too.
    JsonArray unnamed = new JsonArray().add(new JsonObject().put("kty", "oct").put("kid", "k0").put("alg", "HS256").put("k", secret(0)));
    for (int i = 1; i <= KeySet.MAX_KEYS_TRIED; i++) {
      unnamed.add(new JsonObject().put("kty", "oct").put("alg", "HS256").put("k", secret(i)));
    }
    JwtAuthenticator withUnnamed = Await.result(JwtAuthenticator.create(vertx, inline(unnamed), JwksListener.NONE));
    assertEquals(AckpointError.AUTH_UNKNOWN_KEY, failure(withUnnamed.authenticate("Token " + named)));
  }

  /** RFC 7519 section 4.1.3: aud is a string or an array of strings. */
  @Test
  void anAudienceArrayThatHoldsAnythingButStringsIsNoAudience(Vertx vertx) {
    JwtAuthenticator authenticator = Await.result(JwtAuthenticator.create(vertx, inline(TestKeys.jwks().getJsonArray("keys")),
        JwksListener.NONE));
    String mixed = TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET,
        TestKeys.claims("aud").put("aud", new JsonArray().add(1).add(TestKeys.AUDIENCE)));
    assertEquals(AckpointError.AUTH_WRONG_AUDIENCE, failure(authenticator.authenticate("Token " + mixed)));
    String strings = TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET,
        TestKeys.claims("aud").put("aud", new JsonArray().add("other").add(TestKeys.AUDIENCE)));
    assertEquals("aud", Await.result(authenticator.authenticate("Token " + strings)).userId());
  }

  /** RFC 7518 section 3.3: RS256 keys of at least 2048 bits. */
  @Test
  void aConfiguredRsaKeyShorterThan2048BitsIsRefusedNamingItsSize() throws Exception {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
    generator.initialize(1024);
    RSAPublicKey weak = (RSAPublicKey) generator.generateKeyPair().getPublic();
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    JsonObject key = new JsonObject().put("kty", "RSA").put("kid", "short").put("alg", "RS256")
        .put("n", b64.encodeToString(unsigned(weak.getModulus()))).put("e", b64.encodeToString(unsigned(weak.getPublicExponent())));
    ConfigException refused = assertThrows(ConfigException.class, () -> JwtAuthenticator.requireUsableKeys(inline(new JsonArray().add(key))));
    assertTrue(refused.getMessage().contains("is an RSA key of 1024 bits"), refused.getMessage());
  }

  private static byte[] unsigned(BigInteger value) {
    byte[] bytes = value.toByteArray();
    return bytes[0] == 0 ? Arrays.copyOfRange(bytes, 1, bytes.length) : bytes;
  }

  /** RFC 7517 section 4.3: a key whose key_ops leave out "verify" verifies nothing. */
  @Test
  void aKeyWhoseOperationsLeaveOutVerifyVerifiesNothing(Vertx vertx) {
    JsonObject encryptOnly = new JsonObject().put("kty", "oct").put("kid", "enc-only").put("alg", "HS256").put("k", secret(1))
        .put("key_ops", new JsonArray().add("encrypt"));
    JsonArray keys = TestKeys.jwks().getJsonArray("keys").copy().add(encryptOnly);
    JwtAuthenticator authenticator = Await.result(JwtAuthenticator.create(vertx, inline(keys), JwksListener.NONE));
    String token = TestKeys.sign(vertx, "enc-only", secret(1), TestKeys.claims("ops"));
    assertEquals(AckpointError.AUTH_UNKNOWN_KEY, failure(authenticator.authenticate("Token " + token)));
  }

  /** As on the reference: a token that leaks is of use for auth.max_token_lifetime at most. */
  @Test
  void aTokenValidForLongerThanTheMaximumLifetimeIsRefused(Vertx vertx) {
    JwtAuthenticator authenticator = Await.result(JwtAuthenticator.create(vertx, inline(TestKeys.jwks().getJsonArray("keys")),
        JwksListener.NONE));
    long now = Instant.now().getEpochSecond();
    long day = DAY.toSeconds();
    String aDay = TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET, TestKeys.claims("day").put("iat", now).put("exp", now + day));
    assertEquals("day", Await.result(authenticator.authenticate("Token " + aDay)).userId());
    String longer = TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET, TestKeys.claims("long").put("iat", now).put("exp", now + day + 1));
    assertEquals(AckpointError.AUTH_TOO_LONG_LIVED, failure(authenticator.authenticate("Token " + longer)));
    // Issued long ago, expiring soon: its lifetime is still longer than a day.
    String old = TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET,
        TestKeys.claims("old").put("iat", now - 2 * day).put("exp", now + 60));
    assertEquals(AckpointError.AUTH_TOO_LONG_LIVED, failure(authenticator.authenticate("Token " + old)));
    JsonObject withoutIat = TestKeys.claims("no-iat").put("exp", now + day + 120);
    withoutIat.remove("iat");
    assertEquals(AckpointError.AUTH_TOO_LONG_LIVED,
        failure(authenticator.authenticate("Token " + TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET, withoutIat))));
  }
}
