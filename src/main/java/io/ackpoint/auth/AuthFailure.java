package io.ackpoint.auth;

/** Why a request was not authenticated; each reason has its own error code (all answer 401). */
public enum AuthFailure {
  MISSING("ACK_AUTH_MISSING", "no Authorization header with a Token or Bearer credential"),
  MALFORMED("ACK_AUTH_MALFORMED", "the token is not a well-formed JWT"),
  UNSUPPORTED_ALGORITHM("ACK_AUTH_UNSUPPORTED_ALGORITHM", "the token's algorithm is not accepted"),
  UNKNOWN_KEY("ACK_AUTH_UNKNOWN_KEY", "the token's key id is not among the configured keys"),
  BAD_SIGNATURE("ACK_AUTH_BAD_SIGNATURE", "the token's signature does not verify"),
  EXPIRED("ACK_AUTH_EXPIRED", "the token has expired or has no exp claim"),
  NOT_YET_VALID("ACK_AUTH_NOT_YET_VALID", "the token is not valid yet"),
  WRONG_AUDIENCE("ACK_AUTH_WRONG_AUDIENCE", "the token's audience is not accepted"),
  INVALID_SUBJECT("ACK_AUTH_INVALID_SUBJECT", "the token's sub must be a non-empty string that storage can hold");

  private final String code;
  private final String description;

  AuthFailure(String code, String description) {
    this.code = code;
    this.description = description;
  }

  public String code() {
    return code;
  }

  public String description() {
    return description;
  }
}
