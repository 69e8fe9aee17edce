package io.ackpoint.core;

/** What storing a batch did for one full user id. */
public sealed interface WriteOutcome {

  /** Whether the user's checkpoint still waits for replication after this outcome (never, for a write that stored nothing). */
  default boolean pending() {
    return false;
  }

  /**
   * Written. Supplied requests of the user are answered {@code checkpoint}, the id storage holds
   * now; generated requests {@code generated}, the new id made for them ({@code 0} when the batch
   * had none for this user). {@code pending}: the user's checkpoint still waits for replication.
   * {@code pendingHead}: while pending, the head replication must pass for {@code checkpoint}, given
   * only by storage whose acknowledgement of a position at or past it records {@code checkpoint}
   * whatever later writes do to the row; null otherwise.
   */
  record Stored(long checkpoint, long generated, boolean pending, String pendingHead) implements WriteOutcome {

    /** Written, with no head to release the checkpoint at (see {@link io.ackpoint.ack.EarlyReleases}). */
    public Stored(long checkpoint, long generated, boolean pending) {
      this(checkpoint, generated, pending, null);
    }
  }

  /**
   * The stored id is 2^63-1, so no greater id can be generated: the user's generated requests fail
   * and nothing changed for them; its supplied requests (necessarily not greater) are answered
   * {@code checkpoint}.
   */
  record Exhausted(long checkpoint, boolean pending) implements WriteOutcome {
  }

  /** Not written: the user's rows kept changing under concurrent batches beyond the retry limit. */
  record Contended() implements WriteOutcome {
  }

  /** Not written: the database refused this user's data (the rest of the batch was written). */
  record Rejected(String reason) implements WriteOutcome {
  }
}
