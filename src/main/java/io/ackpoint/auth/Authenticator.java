package io.ackpoint.auth;

import io.vertx.core.Future;

/**
 * Tells who sent a request from its {@code Authorization} header. One per event loop, used on it
 * only; a failure is an {@code AckpointException} with one of the {@code AUTH_*} errors.
 */
public interface Authenticator {

  Future<AuthenticatedUser> authenticate(String authorizationHeader);

  /** Stops whatever the authenticator keeps running (a key refresh). */
  Future<Void> close();

  /** Makes the authenticator of the current event loop. */
  @FunctionalInterface
  interface Factory {
    Future<Authenticator> create(io.vertx.core.Vertx vertx);
  }
}
