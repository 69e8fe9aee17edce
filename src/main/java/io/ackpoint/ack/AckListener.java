package io.ackpoint.ack;

/** Observes acknowledgements (the metrics). */
public interface AckListener {

  AckListener NONE = new AckListener() {
  };

  /** {@code acknowledged} checkpoints were marked processed at {@code position}, in {@code nanos}. */
  default void positionApplied(String position, long nanos, int acknowledged) {
  }

  /** Progress published by another verticle was rejected: malformed, or beyond the source's head. */
  default void progressRejected() {
  }
}
