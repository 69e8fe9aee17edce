package io.ackpoint.core;

/** A batch stored at a replication head: every row it made pending carries that head. */
public record HeadedBatch(String head, StoredBatch stored) implements MarkerDecision {

  @Override
  public boolean shouldAdvance() {
    return stored.shouldAdvance();
  }

  /**
   * Both parts of a batch stored in parts, each at its own head. The later head stands for both: a
   * head only says how far replication must get, so a user told a later one than its row holds waits
   * no less, and is never acknowledged early.
   */
  public HeadedBatch plus(HeadedBatch other) {
    return new HeadedBatch(head.compareTo(other.head) >= 0 ? head : other.head, stored.plus(other.stored));
  }
}
