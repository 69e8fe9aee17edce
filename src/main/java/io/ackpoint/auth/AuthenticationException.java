package io.ackpoint.auth;

/**
 * A request that failed authentication, with the specific reason and a description for the client
 * (the reason's own, or one naming the claim or header parameter at fault). Carries no stack trace:
 * it is an answer, not a bug, and a flood of bad tokens must stay cheap.
 */
public final class AuthenticationException extends RuntimeException {

  private final AuthFailure reason;

  public AuthenticationException(AuthFailure reason) {
    this(reason, reason.description());
  }

  public AuthenticationException(AuthFailure reason, String description) {
    super(description, null, false, false);
    this.reason = reason;
  }

  public AuthFailure reason() {
    return reason;
  }

  public String description() {
    return getMessage();
  }
}
