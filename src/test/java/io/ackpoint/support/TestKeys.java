package io.ackpoint.support;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.auth.JWTOptions;
import io.vertx.ext.auth.jwt.JWTAuth;
import io.vertx.ext.auth.jwt.JWTAuthOptions;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Instant;
import java.util.Base64;

/** Real JWTs for tests, signed with the HS256 key the test configuration trusts (or deliberately not). */
public final class TestKeys {

  public static final String KID = "test-key";
  public static final String AUDIENCE = "ackpoint-test";
  public static final String SECRET = "c2VjcmV0LWtleS1mb3ItYWNrcG9pbnQtdGVzdHMtMzJieXRlcw";
  public static final String OTHER_SECRET = "b3RoZXItc2VjcmV0LWtleS1ub3QtdHJ1c3RlZC1hdC1hbGwteHg";

  private TestKeys() {
  }

  public static JsonObject jwks() {
    return new JsonObject().put("keys", new JsonArray().add(jwk(KID, SECRET)));
  }

  static JsonObject jwk(String kid, String secret) {
    return new JsonObject().put("kty", "oct").put("kid", kid).put("alg", "HS256").put("k", secret);
  }

  /** A valid token for {@code sub}, expiring in an hour. */
  public static String token(Vertx vertx, String sub) {
    return sign(vertx, KID, SECRET, claims(sub));
  }

  /** A valid token for {@code sub}, expiring in an hour, signed without a Vert.x instance. */
  public static String token(String sub) {
    return handMade(new JsonObject().put("alg", "HS256").put("typ", "JWT").put("kid", KID), claims(sub), SECRET);
  }

  public static JsonObject claims(String sub) {
    long now = Instant.now().getEpochSecond();
    return new JsonObject().put("sub", sub).put("aud", AUDIENCE).put("iat", now).put("exp", now + 3600);
  }

  /** Signs {@code claims} as they are (no claim is added) with an HS256 key. */
  public static String sign(Vertx vertx, String kid, String secret, JsonObject claims) {
    JWTAuth auth = JWTAuth.create(vertx, new JWTAuthOptions().addJwk(jwk(kid, secret)));
    return auth.generateToken(claims, new JWTOptions().setAlgorithm("HS256").setHeader(new JsonObject().put("kid", kid)).setNoTimestamp(true));
  }

  /** A token assembled by hand, for the header tricks a signing library refuses to make. */
  public static String handMade(JsonObject header, JsonObject claims, String hmacSecret) {
    return handMade(header.encode(), claims.encode(), hmacSecret);
  }

  /** A valid token whose claims are exactly {@code claimsJson}, escapes included (JSON can spell what UTF-8 cannot). */
  public static String withRawClaims(String claimsJson) {
    return handMade(new JsonObject().put("alg", "HS256").put("typ", "JWT").put("kid", KID).encode(), claimsJson, SECRET);
  }

  /** A token of header and claims given as JSON text (see {@link RawJson}), HS256-signed unless the secret is null. */
  public static String handMade(String headerJson, String claimsJson, String hmacSecret) {
    return handMade(headerJson.getBytes(StandardCharsets.UTF_8), claimsJson.getBytes(StandardCharsets.UTF_8), hmacSecret);
  }

  /** A token of header and claims given as bytes, which need not be UTF-8, HS256-signed unless the secret is null. */
  public static String handMade(byte[] headerJson, byte[] claimsJson, String hmacSecret) {
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    String signingInput = b64.encodeToString(headerJson) + "." + b64.encodeToString(claimsJson);
    if (hmacSecret == null) {
      return signingInput + ".";
    }
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(Base64.getUrlDecoder().decode(hmacSecret), "HmacSHA256"));
      return signingInput + "." + b64.encodeToString(mac.doFinal(signingInput.getBytes(StandardCharsets.US_ASCII)));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
