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

  /**
   * The checkpoints the batch made pending are acknowledged by the first position at or after
   * {@code marker} that is applied. The marker is committed with the rows, so a position applied
   * before this call may have been applied a moment before they were visible, and the rows are then
   * recorded by the engine's next statement (AckEngine#recordSoon): the latency counted from here is
   * then too short by that.
   */
  default void acknowledgedAt(String marker) {
  }

  /**
   * The batch made checkpoints pending, but by the time its marker would have been written a
   * position had acknowledged them all (none was left pending, so none was written): they waited
   * for nothing after this call.
   */
  default void acknowledgedAlready() {
  }

  /**
   * The batch made checkpoints pending at {@code head}, and no position after its commit is known
   * yet (its marker comes after this call): they count as waiting from now until a position after
   * this call reaches the head. A position already applied may precede the commit, so it does not.
   */
  default void pendingSince(String head) {
  }

  default void markerForced(long nanos) {
  }

  default void batchFinished(long nanos, boolean succeeded) {
  }
}
