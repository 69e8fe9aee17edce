package io.ackpoint.auth;

/** A request that failed authentication, with the specific reason. */
public final class AuthenticationException extends RuntimeException {

  private final AuthFailure reason;

  public AuthenticationException(AuthFailure reason) {
    super(reason.description(), null, false, false);
    this.reason = reason;
  }

  public AuthFailure reason() {
    return reason;
  }
}
