package io.ackpoint.auth;

import io.ackpoint.AckpointException;
import io.ackpoint.AckpointError;
import io.ackpoint.core.FullUserId;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Instant;
import java.util.List;

/**
 * The claims Ackpoint reads from a token. The time claims are RFC 7519 NumericDates, read when the
 * token is parsed: any finite JSON number (fractions allowed) of seconds in 0..{@value #LAST_NUMERIC_DATE}
 * (years 1970 to 9999), so that every later computation is exact: no {@code Instant} out of range, no
 * overflow in the skew arithmetic, no 2^64 + t that wraps to t. What the claims mean (expired, audience,
 * subject) is checked by {@link #user} once the signature verifies.
 */
record Claims(Long exp, Long nbf, Long iat, Object aud, Object sub) {

  /** 9999-12-31T23:59:59Z. */
  static final long LAST_NUMERIC_DATE = 253402300799L;

  static Claims of(JsonObject claims) {
    return new Claims(numericDate(claims, "exp"), numericDate(claims, "nbf"), numericDate(claims, "iat"),
        claims.getValue("aud"), claims.getValue("sub"));
  }

  /**
   * The identity these claims give at {@code now} (epoch seconds), or the reason they give none. A
   * token may be valid for {@code maxLifetime} seconds at most, counted from its {@code iat}, or from
   * now without one.
   */
  AuthenticatedUser user(long now, long skew, List<String> audiences, long maxLifetime) {
    if (exp == null || now - skew >= exp) {
      throw AckpointError.AUTH_EXPIRED.exception();
    }
    if ((nbf != null && nbf > now + skew) || (iat != null && iat > now + skew)) {
      throw AckpointError.AUTH_NOT_YET_VALID.exception();
    }
    long lifetime = exp - (iat != null ? iat : now);
    if (lifetime > maxLifetime) {
      throw AckpointError.AUTH_TOO_LONG_LIVED.exception("the token is valid for " + lifetime + " s, longer than the "
          + maxLifetime + " s of auth.max_token_lifetime");
    }
    if (!audienceAccepted(audiences)) {
      throw AckpointError.AUTH_WRONG_AUDIENCE.exception();
    }
    return new AuthenticatedUser(subject(), Instant.ofEpochSecond(exp));
  }

  private boolean audienceAccepted(List<String> audiences) {
    if (aud instanceof String single) {
      return audiences.contains(single);
    }
    // RFC 7519 section 4.1.3: an array of strings; one that holds anything else is no audience.
    if (aud instanceof JsonArray list && list.stream().allMatch(String.class::isInstance)) {
      for (Object item : list) {
        if (audiences.contains((String) item)) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * {@code sub} as a user id that storage holds exactly: the rules of {@link FullUserId}. Java encodes
   * U+0000 and unpaired surrogates as '?' (and PostgreSQL refuses U+0000), so two different subs could
   * otherwise become one user; an over-long one would break an index row and fail a whole batch.
   */
  private String subject() {
    if (!(sub instanceof String s)) {
      throw invalidSubject("sub must be a non-empty string");
    }
    String problem = FullUserId.userIdProblem(s);
    if (problem != null) {
      throw invalidSubject("sub " + problem);
    }
    return s;
  }

  /**
   * Claim {@code name} as whole seconds, or null when absent. Fractions are dropped: a second is well
   * within the clock skew. Jackson reads integers beyond the long range as BigInteger, and those are
   * all out of range, so only Integer, Long and Double can be NumericDates here.
   */
  private static Long numericDate(JsonObject claims, String name) {
    if (!claims.containsKey(name)) {
      return null;
    }
    Object value = claims.getValue(name);
    if ((value instanceof Integer || value instanceof Long) && inRange(((Number) value).longValue())) {
      return ((Number) value).longValue();
    }
    // NaN and the infinities fail both comparisons.
    if (value instanceof Double d && d >= 0 && d <= LAST_NUMERIC_DATE) {
      return d.longValue();
    }
    throw AckpointError.AUTH_MALFORMED.exception(
        "claim " + name + " must be a NumericDate: a number of seconds in 0.." + LAST_NUMERIC_DATE);
  }

  private static boolean inRange(long seconds) {
    return seconds >= 0 && seconds <= LAST_NUMERIC_DATE;
  }

  private static AckpointException invalidSubject(String description) {
    return AckpointError.AUTH_INVALID_SUBJECT.exception( description);
  }
}
