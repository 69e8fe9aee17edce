package io.ackpoint.batch;

import io.ackpoint.AckpointException;
import io.ackpoint.core.FullUserId;

/**
 * The input rules shared by the HTTP routes and the event-bus API: checkpoint request ids and client
 * ids. Nothing is stored for input that breaks them.
 */
public final class CheckpointRequestValidation {

  /** Integers beyond this cannot be represented exactly by JavaScript clients; they must be sent as strings. */
  public static final long MAX_SAFE_JSON_INTEGER = (1L << 53) - 1;

  private CheckpointRequestValidation() {
  }

  /**
   * A checkpoint request id is a JSON string of ASCII digits or a JSON integer, in
   * 1..9223372036854775807; JSON integers above 2^53-1 are refused.
   */
  public static long checkpointRequestId(Object value) {
    if (value instanceof String s) {
      return parseDigits(s);
    }
    if (value instanceof Integer || value instanceof Long) {
      long n = ((Number) value).longValue();
      if (n < 1) {
        throw invalidId("must be at least 1");
      }
      if (n > MAX_SAFE_JSON_INTEGER) {
        throw invalidId("JSON numbers above 2^53-1 lose precision: send the id as a string");
      }
      return n;
    }
    if (value == null) {
      throw invalidId("is required");
    }
    if (value instanceof Number) {
      throw invalidId(value instanceof Double || value instanceof Float
          ? "must be an integer (no fraction or exponent)"
          : "JSON numbers above 2^53-1 lose precision: send the id as a string");
    }
    throw invalidId("must be a string of decimal digits");
  }

  private static long parseDigits(String s) {
    if (s.isEmpty() || s.length() > 19) {
      throw invalidId("must be 1 to 19 decimal digits");
    }
    long n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        throw invalidId("must contain only the digits 0-9");
      }
      int digit = c - '0';
      if (n > (Long.MAX_VALUE - digit) / 10) {
        throw invalidId("must be at most 9223372036854775807");
      }
      n = n * 10 + digit;
    }
    if (n < 1) {
      throw invalidId("must be at least 1");
    }
    return n;
  }

  /**
   * A client id is optional; when given, a string of at most 256 characters without control
   * characters or unpaired surrogates. An empty one is the same as none.
   */
  public static String clientId(Object value) {
    if (value == null) {
      return null;
    }
    if (!(value instanceof String s)) {
      throw AckpointException.badRequest("ACK_INVALID_CLIENT_ID", "client_id must be a string");
    }
    String problem = FullUserId.clientIdProblem(s);
    if (problem != null) {
      throw AckpointException.badRequest("ACK_INVALID_CLIENT_ID", "client_id " + problem);
    }
    return s;
  }

  /** The full user id of a {@code user_id} given over the event bus and a validated client id. */
  public static FullUserId fullUserId(Object userId, String clientId) {
    if (!(userId instanceof String id)) {
      throw AckpointException.badRequest("ACK_INVALID_USER_ID", "user_id must be a non-empty string");
    }
    String problem = FullUserId.userIdProblem(id);
    if (problem != null) {
      throw AckpointException.badRequest("ACK_INVALID_USER_ID", "user_id " + problem);
    }
    return new FullUserId(id, clientId);
  }

  private static AckpointException invalidId(String problem) {
    return AckpointException.badRequest("ACK_INVALID_CHECKPOINT_REQUEST_ID", "checkpoint_request_id " + problem);
  }
}
