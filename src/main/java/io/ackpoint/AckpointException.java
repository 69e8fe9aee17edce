package io.ackpoint;

import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;

/**
 * A failure with a stable error code and the HTTP status it maps to. It crosses the event bus as a
 * {@link ReplyException} whose failure code is the status and whose message carries the code and
 * description, so that callers of {@code ackpoint.checkpoint.create} see the same error as HTTP clients.
 */
public final class AckpointException extends RuntimeException {

  private final int status;
  private final String code;

  public AckpointException(int status, String code, String description) {
    this(status, code, description, null);
  }

  public AckpointException(int status, String code, String description, Throwable cause) {
    super(description, cause, false, false);
    this.status = status;
    this.code = code;
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }

  public String description() {
    return getMessage();
  }

  public static AckpointException badRequest(String code, String description) {
    return new AckpointException(400, code, description);
  }

  public static AckpointException storageUnavailable(Throwable cause) {
    return new AckpointException(503, "ACK_STORAGE_UNAVAILABLE", "checkpoint storage is unavailable: " + message(cause), cause);
  }

  public static AckpointException sourceUnavailable(Throwable cause) {
    return new AckpointException(503, "ACK_SOURCE_UNAVAILABLE", "source database is unavailable: " + message(cause), cause);
  }

  private static String message(Throwable cause) {
    return cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
  }

  public ReplyException toReplyException() {
    return new ReplyException(ReplyFailure.RECIPIENT_FAILURE, status,
        new JsonObject().put("code", code).put("description", description()).encode());
  }

  /** Recovers the error from an event-bus failure; anything unrecognised becomes a 503 or 500. */
  public static AckpointException from(Throwable failure) {
    if (failure instanceof AckpointException e) {
      return e;
    }
    if (failure instanceof ReplyException reply) {
      if (reply.failureType() == ReplyFailure.RECIPIENT_FAILURE && reply.getMessage() != null
          && reply.getMessage().startsWith("{")) {
        try {
          JsonObject json = new JsonObject(reply.getMessage());
          return new AckpointException(reply.failureCode(), json.getString("code"), json.getString("description"));
        } catch (RuntimeException ignored) {
          // not one of ours: fall through
        }
      }
      if (reply.failureType() == ReplyFailure.TIMEOUT) {
        return new AckpointException(503, "ACK_BATCHER_TIMEOUT", "the checkpoint batcher did not answer in time");
      }
      if (reply.failureType() == ReplyFailure.NO_HANDLERS) {
        return new AckpointException(503, "ACK_BATCHER_UNAVAILABLE", "the checkpoint batcher is not running");
      }
    }
    return new AckpointException(500, "ACK_INTERNAL", "internal error");
  }
}
