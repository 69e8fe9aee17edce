package io.ackpoint.auth;

import io.ackpoint.AckpointException;
import io.ackpoint.AckpointError;
import io.ackpoint.config.AckpointConfig.AuthConfig;
import io.ackpoint.config.ConfigException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.auth.User;
import io.vertx.ext.auth.authentication.TokenCredentials;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Verifies {@code Authorization: Token|Bearer <jwt>} headers against the trusted keys: the inline
 * JWKS, always, and the keys of the JWKS URI if one is configured. Those are fetched at start, every
 * refresh interval, and on demand (rate-limited) for a token that names an unknown kid or, without a
 * kid, that no known key verifies; each successful fetch replaces the remote keys, a failed one keeps
 * them. Signatures are verified by vertx-auth-jwt; the header and claims are checked here so that
 * every failure has a specific reason.
 *
 * <p>Confined to the event loop that creates it (an HTTP verticle's): the refresh timer and the
 * fetches run there too, so its state needs no synchronization.
 */
public final class JwtAuthenticator implements Authenticator {

  private static final Logger LOG = LoggerFactory.getLogger(JwtAuthenticator.class);

  private final Vertx vertx;
  private final AuthConfig config;
  private final Clock clock;
  private final List<JsonObject> inlineKeys;
  private final RemoteJwks remote;
  /** 10,000 tokens of an ordinary size, fewer large ones: 8 M characters (8 MB: a token is ASCII) per event loop. */
  private final VerifiedTokens verified = new VerifiedTokens(10_000, 8L << 20);
  private List<JsonObject> remoteKeys = List.of();
  private KeySet keys;
  private long refreshTimer = -1;

  private JwtAuthenticator(Vertx vertx, AuthConfig config, Clock clock, RemoteJwks remote) {
    this.vertx = vertx;
    this.config = config;
    this.clock = clock;
    this.inlineKeys = KeySet.keysOf(config.jwks());
    this.remote = remote;
    this.keys = KeySet.of(vertx, inlineKeys);
  }

  /**
   * Refuses configured keys that cannot verify anything: an unusable key in {@code auth.jwks} would
   * otherwise pass unnoticed and every token signed for it be refused as badly signed. (Keys fetched
   * from {@code auth.jwks_uri} are the identity provider's, and unusable ones are skipped, as RFC 7517
   * asks.)
   */
  public static void requireUsableKeys(AuthConfig config) {
    Object keys = config.jwks().getValue("keys");
    if (!(keys instanceof JsonArray list)) {
      return;
    }
    int signing = 0;
    for (int i = 0; i < list.size(); i++) {
      if (KeySet.notForSignatures(list.getValue(i))) {
        // An identity provider's JWKS pasted whole lists its encryption keys too (Keycloak's does).
        LOG.warn("auth.jwks: key {} is an encryption key (use, key_ops or alg); it verifies no token", i + 1);
        continue;
      }
      String problem = KeySet.unusable(list.getValue(i));
      if (problem != null) {
        Object key = list.getValue(i);
        String kid = key instanceof JsonObject jwk && jwk.getValue("kid") instanceof String id ? " (kid " + id + ")" : "";
        throw new ConfigException("auth.jwks", "key " + (i + 1) + kid + " " + problem);
      }
      signing++;
    }
    if (signing == 0 && !list.isEmpty() && config.jwksUri().isBlank()) {
      throw new ConfigException("auth.jwks", "no key verifies signatures (every key is for encryption): no token could be accepted");
    }
  }

  /** Authenticators that verify against {@code config}'s keys, one per event loop that asks. */
  public static Authenticator.Factory factory(AuthConfig config, JwksListener listener) {
    return vertx -> create(vertx, config, listener).map(a -> a);
  }

  /**
   * Creates an authenticator on the current event loop; with a JWKS URI, its keys are fetched before
   * the future completes, then refreshed until {@link #close}. Fetch failures go to {@code listener}.
   */
  public static Future<JwtAuthenticator> create(Vertx vertx, AuthConfig config, JwksListener listener) {
    return create(vertx, config, listener, Clock.systemUTC());
  }

  static Future<JwtAuthenticator> create(Vertx vertx, AuthConfig config, JwksListener listener, Clock clock) {
    RemoteJwks remote = config.jwksUri().isBlank() ? null
        : new RemoteJwks(vertx, config.jwksUri(), config.jwksMinFetchInterval(), config.jwksFetchTimeout(), listener);
    JwtAuthenticator authenticator = new JwtAuthenticator(vertx, config, clock, remote);
    if (remote == null) {
      return Future.succeededFuture(authenticator);
    }
    authenticator.refreshTimer = vertx.setPeriodic(config.jwksRefreshInterval().toMillis(),
        id -> authenticator.refreshRemoteKeys());
    // A JWKS endpoint that is down at start must not stop the service: inline keys still work and
    // the remote keys are fetched again on the next refresh or the first token that needs them.
    return authenticator.refreshRemoteKeys().otherwiseEmpty().map(authenticator);
  }

  /** Stops refreshing the remote keys. */
  @Override
  public Future<Void> close() {
    if (remote == null) {
      return Future.succeededFuture();
    }
    vertx.cancelTimer(refreshTimer);
    return remote.close();
  }

  /**
   * The token of {@code Token <jwt>} or {@code Bearer <jwt>} (RFC 9110 section 11.1: the scheme in any
   * case, then one or more spaces; then no whitespace to the end), or null for anything else. By hand
   * rather than by a regular expression: it runs for every request.
   */
  static String credentials(String header) {
    int space = header.indexOf(' ');
    boolean scheme = space == 5 && startsWithInAnyAsciiCase(header, "token")
        || space == 6 && startsWithInAnyAsciiCase(header, "bearer");
    if (!scheme) {
      return null;
    }
    int from = space;
    while (from < header.length() && header.charAt(from) == ' ') {
      from++;
    }
    if (from == header.length()) {
      return null;
    }
    for (int i = from; i < header.length(); i++) {
      char c = header.charAt(i);
      // What \s matches: a space, \t, \n, \x0B, \f or \r.
      if (c == ' ' || (c >= '\t' && c <= '\r')) {
        return null;
      }
    }
    return header.substring(from);
  }

  /** Whether {@code text} starts with {@code lower} (lower-case ASCII) in any ASCII case. */
  private static boolean startsWithInAnyAsciiCase(String text, String lower) {
    for (int i = 0; i < lower.length(); i++) {
      char c = text.charAt(i);
      if ((c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c) != lower.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  @Override
  public Future<AuthenticatedUser> authenticate(String authorizationHeader) {
    if (authorizationHeader == null) {
      return fail(AckpointError.AUTH_MISSING);
    }
    String compact = credentials(authorizationHeader);
    if (compact == null) {
      return fail(AckpointError.AUTH_MISSING);
    }
    AuthenticatedUser known = verified.get(compact);
    if (known != null) {
      return known.expiresAt().getEpochSecond() > clock.instant().getEpochSecond() - config.clockSkew().toSeconds()
          ? Future.succeededFuture(known)
          : fail(AckpointError.AUTH_EXPIRED);
    }
    Token token;
    try {
      token = Token.parse(compact);
    } catch (AckpointException e) {
      return Future.failedFuture(e);
    }
    String kid = token.kid();
    if (kid != null && !keys.hasKey(kid)) {
      // Perhaps a key rotated in since the last refresh.
      return mayFetch()
          ? refreshRemoteKeys().transform(ignored -> keys.hasKey(kid) ? verify(token) : fail(AckpointError.AUTH_UNKNOWN_KEY))
          : fail(AckpointError.AUTH_UNKNOWN_KEY);
    }
    Future<AuthenticatedUser> verification = verify(token);
    if (kid != null) {
      return verification;
    }
    // Without a kid, the only sign of a key rotated in is that no known key verifies the token.
    return verification.recover(failure -> noKnownKeyVerifies(failure) && mayFetch()
        ? refreshRemoteKeys().transform(fetch -> fetch.succeeded() ? verify(token) : verification)
        : verification);
  }

  private boolean mayFetch() {
    return remote != null && remote.mayFetch();
  }

  private static boolean noKnownKeyVerifies(Throwable failure) {
    return failure instanceof AckpointException e
        && (e.error() == AckpointError.AUTH_BAD_SIGNATURE || e.error() == AckpointError.AUTH_UNSUPPORTED_ALGORITHM);
  }

  private Future<AuthenticatedUser> verify(Token token) {
    KeySet used = keys;
    if (!used.accepts(token.alg())) {
      return fail(AckpointError.AUTH_UNSUPPORTED_ALGORITHM);
    }
    int tried = used.keysTried(token.alg(), token.kid());
    if (tried > KeySet.MAX_KEYS_TRIED) {
      return Future.failedFuture(AckpointError.AUTH_UNKNOWN_KEY.exception("the token could be checked against " + tried + " "
          + token.alg() + " keys (" + (token.kid() == null ? "it names no kid" : "keys without a kid") + "): "
          + KeySet.MAX_KEYS_TRIED + " at most are tried"));
    }
    return verifySignature(used, token.compact()).transform(ar -> {
      if (ar.failed()) {
        return ar.cause() instanceof AckpointException e ? Future.failedFuture(e) : fail(AckpointError.AUTH_BAD_SIGNATURE);
      }
      AuthenticatedUser user;
      try {
        user = token.claims().user(clock.instant().getEpochSecond(), config.clockSkew().toSeconds(), config.audiences(),
            config.maxTokenLifetime().toSeconds());
      } catch (AckpointException e) {
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
      return fail(AckpointError.AUTH_MALFORMED);
    }
  }

  /** Fetches the remote keys; the trusted keys become the inline ones plus those just fetched. */
  private Future<Void> refreshRemoteKeys() {
    return remote.fetch().map(fetched -> {
      if (!fetched.equals(remoteKeys)) {
        remoteKeys = fetched;
        keys = KeySet.of(vertx, withRemote(fetched));
        // A key that disappeared must not keep vouching for the tokens it signed.
        verified.clear();
      }
      return null;
    });
  }

  /**
   * The inline keys, then the fetched keys that no key before them names: the verifier keeps one key
   * per algorithm and kid, the last one given, so a published key named as an inline one replaced
   * it, and every token of the inline key was refused (a hostile test of the key server). Inline
   * keys are the operator's own and stay.
   */
  private List<JsonObject> withRemote(List<JsonObject> fetched) {
    List<JsonObject> all = new ArrayList<>(inlineKeys);
    Set<String> names = new HashSet<>();
    inlineKeys.forEach(key -> names.add(KeySet.name(key)));
    List<RemoteJwks.LeftOut> named = new ArrayList<>();
    for (JsonObject key : fetched) {
      if (key.getString("kid") != null && !names.add(KeySet.name(key))) {
        named.add(new RemoteJwks.LeftOut("the key " + key.getString("kid"),
            "has the algorithm and kid of a key before it (in auth.jwks, or earlier in the set), which is kept"));
      } else {
        all.add(key);
      }
    }
    remote.keysLeftOut("named as another", named);
    return all;
  }

  private static <T> Future<T> fail(AckpointError reason) {
    return Future.failedFuture(reason.exception());
  }
}
