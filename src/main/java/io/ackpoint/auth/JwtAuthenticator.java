package io.ackpoint.auth;

import io.ackpoint.config.AckpointConfig.AuthConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.auth.authentication.TokenCredentials;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Verifies {@code Authorization: Token|Bearer <jwt>} headers against the configured keys: inline
 * JWKS and, optionally, a JWKS URI that is fetched at start and again when a token names an unknown
 * key id. Signatures are verified by vertx-auth-jwt; the header and claims are checked here so that
 * every failure has a specific reason.
 */
public final class JwtAuthenticator {

  private static final Pattern AUTHORIZATION = Pattern.compile("^(Token|Bearer) (\\S+)$");
  private static final Base64.Decoder BASE64URL = Base64.getUrlDecoder();

  private final Vertx vertx;
  private final AuthConfig config;
  private final Clock clock;
  private final List<JsonObject> inlineKeys;
  private final RemoteJwks remote;
  private final VerifiedTokens verified = new VerifiedTokens(10_000);
  private KeySet keys;

  private JwtAuthenticator(Vertx vertx, AuthConfig config, Clock clock, RemoteJwks remote) {
    this.vertx = vertx;
    this.config = config;
    this.clock = clock;
    this.inlineKeys = KeySet.keysOf(config.jwks());
    this.remote = remote;
    this.keys = KeySet.of(vertx, inlineKeys);
  }

  /** Creates an authenticator; with a JWKS URI, its keys are fetched before the future completes. */
  public static Future<JwtAuthenticator> create(Vertx vertx, AuthConfig config) {
    return create(vertx, config, Clock.systemUTC());
  }

  static Future<JwtAuthenticator> create(Vertx vertx, AuthConfig config, Clock clock) {
    RemoteJwks remote = config.jwksUri().isBlank() ? null
        : new RemoteJwks(vertx, config.jwksUri(), config.jwksRefreshInterval(), config.jwksFetchTimeout());
    JwtAuthenticator authenticator = new JwtAuthenticator(vertx, config, clock, remote);
    if (remote == null) {
      return Future.succeededFuture(authenticator);
    }
    // A JWKS endpoint that is down at start must not stop the service: inline keys still work and
    // the remote keys are fetched again on the first token that needs them.
    return authenticator.refreshRemoteKeys().otherwiseEmpty().map(authenticator);
  }

  public Future<AuthenticatedUser> authenticate(String authorizationHeader) {
    if (authorizationHeader == null) {
      return fail(AuthFailure.MISSING);
    }
    Matcher m = AUTHORIZATION.matcher(authorizationHeader);
    if (!m.matches()) {
      return fail(AuthFailure.MISSING);
    }
    String token = m.group(2);
    AuthenticatedUser known = verified.get(token);
    if (known != null) {
      return known.expiresAt().getEpochSecond() > clock.instant().getEpochSecond() - config.clockSkew().toSeconds()
          ? Future.succeededFuture(known)
          : fail(AuthFailure.EXPIRED);
    }
    String[] parts = token.split("\\.", -1);
    if (parts.length != 3 || parts[2].isEmpty()) {
      return fail(parts.length == 3 && "none".equalsIgnoreCase(algorithmOf(parts[0]))
          ? AuthFailure.UNSUPPORTED_ALGORITHM : AuthFailure.MALFORMED);
    }
    JsonObject header = decodeSegment(parts[0]);
    JsonObject claims = decodeSegment(parts[1]);
    if (header == null || claims == null || !(header.getValue("alg") instanceof String alg)) {
      return fail(AuthFailure.MALFORMED);
    }
    Object kidValue = header.getValue("kid");
    if (kidValue != null && !(kidValue instanceof String)) {
      return fail(AuthFailure.MALFORMED);
    }
    String kid = (String) kidValue;
    if (kid != null && !keys.hasKey(kid)) {
      if (remote == null || !remote.mayRefresh()) {
        return fail(AuthFailure.UNKNOWN_KEY);
      }
      return refreshRemoteKeys().transform(ignored -> keys.hasKey(kid)
          ? verify(token, alg, claims)
          : fail(AuthFailure.UNKNOWN_KEY));
    }
    return verify(token, alg, claims);
  }

  private Future<AuthenticatedUser> verify(String token, String alg, JsonObject claims) {
    if (!keys.accepts(alg)) {
      return fail(AuthFailure.UNSUPPORTED_ALGORITHM);
    }
    return keys.verifier().authenticate(new TokenCredentials(token)).transform(ar -> {
      if (ar.failed()) {
        return fail(AuthFailure.BAD_SIGNATURE);
      }
      return checkClaims(claims).onSuccess(user -> verified.put(token, user));
    });
  }

  private Future<AuthenticatedUser> checkClaims(JsonObject claims) {
    long now = clock.instant().getEpochSecond();
    long skew = config.clockSkew().toSeconds();
    if (!(claims.getValue("exp") instanceof Number exp)) {
      return fail(AuthFailure.EXPIRED);
    }
    if (now - skew >= exp.longValue()) {
      return fail(AuthFailure.EXPIRED);
    }
    Object nbf = claims.getValue("nbf");
    Object iat = claims.getValue("iat");
    if ((nbf != null && !(nbf instanceof Number)) || (iat != null && !(iat instanceof Number))) {
      return fail(AuthFailure.MALFORMED);
    }
    if ((nbf != null && ((Number) nbf).longValue() > now + skew)
        || (iat != null && ((Number) iat).longValue() > now + skew)) {
      return fail(AuthFailure.NOT_YET_VALID);
    }
    if (!audienceAccepted(claims.getValue("aud"))) {
      return fail(AuthFailure.WRONG_AUDIENCE);
    }
    if (!(claims.getValue("sub") instanceof String sub) || sub.isEmpty()) {
      return fail(AuthFailure.INVALID_SUBJECT);
    }
    return Future.succeededFuture(new AuthenticatedUser(sub, Instant.ofEpochSecond(exp.longValue())));
  }

  private boolean audienceAccepted(Object aud) {
    if (aud instanceof String single) {
      return config.audiences().contains(single);
    }
    if (aud instanceof JsonArray list) {
      for (Object item : list) {
        if (item instanceof String s && config.audiences().contains(s)) {
          return true;
        }
      }
    }
    return false;
  }

  private Future<Void> refreshRemoteKeys() {
    return remote.fetch().map(remoteKeys -> {
      List<JsonObject> all = new ArrayList<>(inlineKeys);
      all.addAll(remoteKeys);
      keys = KeySet.of(vertx, all);
      // A key that disappeared must not keep vouching for the tokens it signed.
      verified.clear();
      return null;
    });
  }

  private static String algorithmOf(String headerSegment) {
    JsonObject header = decodeSegment(headerSegment);
    return header == null ? null : header.getString("alg", null);
  }

  private static JsonObject decodeSegment(String segment) {
    try {
      return new JsonObject(new String(BASE64URL.decode(segment), StandardCharsets.UTF_8));
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static <T> Future<T> fail(AuthFailure reason) {
    return Future.failedFuture(new AuthenticationException(reason));
  }
}
