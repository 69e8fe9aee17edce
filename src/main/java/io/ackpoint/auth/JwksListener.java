package io.ackpoint.auth;

/**
 * Hears what happens to the keys of {@code auth.jwks_uri}, for metrics: this package knows no
 * metrics library. Called on the event loop of the authenticator; implementations must be quick and
 * thread-safe (every HTTP verticle has its own authenticator).
 */
public interface JwksListener {

  JwksListener NONE = () -> { };

  /** A fetch failed (connection, status, timeout, or not a JWKS); the keys already known stay in use. */
  void jwksFetchFailed();
}
