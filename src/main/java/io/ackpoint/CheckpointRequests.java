package io.ackpoint;

import io.ackpoint.core.CheckpointCommand;
import io.ackpoint.core.FullUserId;
import io.vertx.core.json.JsonObject;

import java.math.BigDecimal;
import java.math.BigInteger;

/**
 * The input rules of a checkpoint request, shared by the HTTP routes and the event-bus API: user ids,
 * client ids and checkpoint request ids. Nothing is stored for input that breaks them; each rule
 * fails with its own {@link AckpointError}.
 */
public final class CheckpointRequests {

  /** Integers beyond this cannot be represented exactly by JavaScript clients; they must be sent as strings. */
  public static final long MAX_SAFE_JSON_INTEGER = (1L << 53) - 1;

  private CheckpointRequests() {
  }

  /**
   * A checkpoint request id is a JSON string of ASCII digits or a JSON integer, in
   * 1..9223372036854775807; JSON integers above 2^53-1 are refused.
   */
  public static long checkpointRequestId(Object value) {
    if (value instanceof String s) {
      return parseDigits(s);
    }
    if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
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
    if (value instanceof Double || value instanceof Float) {
      throw invalidId("must be an integer (no fraction or exponent)");
    }
    if (value instanceof BigInteger || value instanceof BigDecimal) {
      // What a JSON integer beyond a long is parsed into: above 2^53-1 as well.
      throw invalidId("JSON numbers above 2^53-1 lose precision: send the id as a string");
    }
    if (value instanceof Number) {
      throw invalidId("must be a string of decimal digits or an integer (Integer or Long), not a " + value.getClass().getSimpleName());
    }
    throw invalidId("must be a string of decimal digits");
  }

  /** Any number of digits (the body limit bounds them): leading zeros do not count, the value does. */
  private static long parseDigits(String s) {
    if (s.isEmpty()) {
      throw invalidId("must be decimal digits");
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
      throw AckpointError.INVALID_CLIENT_ID.exception("client_id must be a string");
    }
    String problem = FullUserId.clientIdProblem(s);
    if (problem != null) {
      throw AckpointError.INVALID_CLIENT_ID.exception("client_id " + problem);
    }
    return s;
  }

  /**
   * The command of an {@code ackpoint.checkpoint.create} body,
   * {@code {"user_id","client_id"?,"checkpoint_request_id"?}}: generated without an id, supplied with one.
   */
  public static CheckpointCommand command(Object body) {
    if (!(body instanceof JsonObject json)) {
      throw AckpointError.INVALID_JSON.exception("the message body must be a JSON object");
    }
    FullUserId user = fullUserId(json.getValue("user_id"), clientId(json.getValue("client_id")));
    // Optional, as client_id is: null is absent (a JsonObject made from an object with the field unset).
    Object requested = json.getValue("checkpoint_request_id");
    return requested == null ? CheckpointCommand.generated(user) : CheckpointCommand.requested(user, checkpointRequestId(requested));
  }

  /** The full user id of a {@code user_id} given over the event bus and a validated client id. */
  public static FullUserId fullUserId(Object userId, String clientId) {
    if (!(userId instanceof String id)) {
      throw AckpointError.INVALID_USER_ID.exception();
    }
    String problem = FullUserId.userIdProblem(id);
    if (problem != null) {
      throw AckpointError.INVALID_USER_ID.exception("user_id " + problem);
    }
    return new FullUserId(id, clientId);
  }

  private static AckpointException invalidId(String problem) {
    return AckpointError.INVALID_CHECKPOINT_REQUEST_ID.exception("checkpoint_request_id " + problem);
  }
}
