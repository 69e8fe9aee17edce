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

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(VertxExtension.class)
class JwtAuthenticatorTest {

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
        Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(5));
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
        Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(30));
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
          "", Duration.ofMinutes(5), Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(5));
      ConfigException refused = assertThrows(ConfigException.class, () -> JwtAuthenticator.requireUsableKeys(config));
      assertTrue(refused.getMessage().contains("auth.jwks") && refused.getMessage().contains("key 1 (kid weak) is a secret of "),
          refused.getMessage());
    }
    JsonObject withoutAlg = new JsonObject().put("kty", "oct").put("k", "YWJj");
    assertThrows(ConfigException.class, () -> JwtAuthenticator.requireUsableKeys(new AuthConfig(List.of(TestKeys.AUDIENCE),
        new JsonObject().put("keys", new JsonArray().add(withoutAlg)), "", Duration.ofMinutes(5), Duration.ZERO,
        Duration.ofSeconds(5), Duration.ofSeconds(5))), "HS256 is the default of an oct key");
    JwtAuthenticator.requireUsableKeys(new AuthConfig(List.of(TestKeys.AUDIENCE), TestKeys.jwks(), "", Duration.ofMinutes(5),
        Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(5)));
  }
}
