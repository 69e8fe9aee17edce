package io.ackpoint;

import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

/**
 * A failure from the {@link AckpointError} catalogue, with a description for the client. It is a
 * {@link ReplyException}, so it crosses the event bus as itself: a verticle that asked
 * {@code ackpoint.checkpoint.create} sees the same error an HTTP client would, with the HTTP status as
 * failure code. Carries no stack trace: it is an answer, not a bug, and floods of bad input must stay
 * cheap.
 */
public final class AckpointException extends ReplyException {

  private final AckpointError error;

  AckpointException(AckpointError error, String description, Throwable cause) {
    super(ReplyFailure.RECIPIENT_FAILURE, error.status(), description, cause, true);
    this.error = error;
  }

  public AckpointError error() {
    return error;
  }

  public String code() {
    return error.code();
  }

  public int status() {
    return error.status();
  }

  public String description() {
    return getMessage();
  }

  /**
   * Answers the request {@code message} with the outcome of {@code result}: its value, or its failure
   * as the catalogue's error.
   */
  public static void reply(Message<?> message, Future<?> result) {
    result.onComplete(ar -> {
      if (ar.succeeded()) {
        message.reply(ar.result());
      } else {
        message.reply(of(ar.cause()));
      }
    });
  }

  /**
   * The catalogue's view of any failure: itself when it is one; an event-bus request that nobody
   * answered in time or that had no consumer is {@link AckpointError#UNAVAILABLE}; anything else is
   * {@link AckpointError#INTERNAL}.
   */
  public static AckpointException of(Throwable failure) {
    if (failure instanceof AckpointException e) {
      return e;
    }
    if (failure instanceof ReplyException reply
        && (reply.failureType() == ReplyFailure.TIMEOUT || reply.failureType() == ReplyFailure.NO_HANDLERS)) {
      return AckpointError.UNAVAILABLE.exception(reply);
    }
    return AckpointError.INTERNAL.exception();
  }
}
