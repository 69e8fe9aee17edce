package io.ackpoint.batch;

/** Observes batches: their size, how long each step took, how they ended (the metrics). */
public interface BatchListener {

  BatchListener NONE = new BatchListener() {
  };

  default void batchStarted(int requests, int users) {
  }

  default void headRead(String head, long nanos) {
  }

  /** The batch is durably stored at {@code head}. */
  default void stored(String head, long nanos) {
  }

  default void markerForced(long nanos) {
  }

  default void batchFinished(long nanos, boolean succeeded) {
  }
}
