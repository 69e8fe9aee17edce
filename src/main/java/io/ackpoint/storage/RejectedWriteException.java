package io.ackpoint.storage;

/**
 * The database refused the data of a write (a value out of range, a key too long for its index),
 * as opposed to being unavailable: the same write would fail again, and it says nothing about the
 * other writes of its batch.
 */
public final class RejectedWriteException extends RuntimeException {

  public RejectedWriteException(String message, Throwable cause) {
    super(message, cause, false, false);
  }
}
