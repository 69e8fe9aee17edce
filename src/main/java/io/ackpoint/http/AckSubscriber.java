package io.ackpoint.http;

/** Something on an HTTP event loop that waits for acknowledgements of one full user id. */
interface AckSubscriber {

  /** Replication passed {@code writeCheckpoint} of this subscriber's user, at checkpoint sequence {@code checkpoint}. */
  void reached(long writeCheckpoint, String checkpoint);

  /** Called about once a second by the registry's single sweep timer, for keepalives and expiry. */
  default void tick(long nowMillis) {
  }
}
