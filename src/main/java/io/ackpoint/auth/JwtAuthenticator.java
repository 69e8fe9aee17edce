package io.ackpoint.auth;

import io.ackpoint.config.AckpointConfig.AuthConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.auth.User;
import io.vertx.ext.auth.authentication.TokenCredentials;

import java.time.Clock;
import java.util.ArrayList;
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
    String compact = m.group(2);
    AuthenticatedUser known = verified.get(compact);
    if (known != null) {
      return known.expiresAt().getEpochSecond() > clock.instant().getEpochSecond() - config.clockSkew().toSeconds()
          ? Future.succeededFuture(known)
          : fail(AuthFailure.EXPIRED);
    }
    Token token;
    try {
      token = Token.parse(compact);
    } catch (AuthenticationException e) {
      return Future.failedFuture(e);
    }
    String kid = token.kid();
    if (kid != null && !keys.hasKey(kid)) {
      if (remote == null || !remote.mayRefresh()) {
        return fail(AuthFailure.UNKNOWN_KEY);
      }
      return refreshRemoteKeys().transform(ignored -> keys.hasKey(kid)
          ? verify(token)
          : fail(AuthFailure.UNKNOWN_KEY));
    }
    return verify(token);
  }

  private Future<AuthenticatedUser> verify(Token token) {
    KeySet used = keys;
    if (!used.accepts(token.alg())) {
      return fail(AuthFailure.UNSUPPORTED_ALGORITHM);
    }
    return verifySignature(used, token.compact()).transform(ar -> {
      if (ar.failed()) {
        return ar.cause() instanceof AuthenticationException e ? Future.failedFuture(e) : fail(AuthFailure.BAD_SIGNATURE);
      }
      AuthenticatedUser user;
      try {
        user = token.claims().user(clock.instant().getEpochSecond(), config.clockSkew().toSeconds(), config.audiences());
      } catch (AuthenticationException e) {
        return Future.failedFuture(e);
      }
      // A key removed while this token was verified must not go on vouching for it from the cache.
      if (used == keys) {
        verified.put(token.compact(), user);
      }
      return Future.succeededFuture(user);
    });
  }

  /**
   * vertx-auth-jwt verifies the signature, then reads {@code exp}, {@code iat} and {@code nbf} itself
   * and throws on values it cannot read. {@link Token#parse} refuses those first; anything still thrown
   * is a token we cannot read, so a 401 and never a 500.
   */
  private static Future<User> verifySignature(KeySet keys, String compact) {
    try {
      return keys.verifier().authenticate(new TokenCredentials(compact));
    } catch (RuntimeException e) {
      return fail(AuthFailure.MALFORMED);
    }
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

  private static <T> Future<T> fail(AuthFailure reason) {
    return Future.failedFuture(new AuthenticationException(reason));
  }
}
