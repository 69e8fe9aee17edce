package io.ackpoint.core;

import java.util.function.BinaryOperator;

/**
 * A batch stored at a replication head: every row it made pending carries that head. {@code marker}:
 * the position of the marker written in the batch's transaction, when the batch and its marker were
 * one round trip; null when not written (nothing was pending) or not known.
 */
public record HeadedBatch(String head, StoredBatch stored, String marker) implements MarkerDecision {

  public HeadedBatch(String head, StoredBatch stored) {
    this(head, stored, null);
  }

  @Override
  public boolean shouldAdvance() {
    return stored.shouldAdvance();
  }

  /**
   * Both parts of a batch stored in parts, each at its own head. The later head stands for both: a
   * head only says how far replication must get, so a user told a later one than its row holds waits
   * no less, and is never acknowledged early. The later marker, too, follows both commits.
   */
  public HeadedBatch plus(HeadedBatch other) {
    return plus(other, (first, second) -> second);
  }

  /** As {@link #plus(HeadedBatch)}; a user stored in both parts is answered {@code sameUser} of its two outcomes. */
  public HeadedBatch plus(HeadedBatch other, BinaryOperator<WriteOutcome> sameUser) {
    return new HeadedBatch(PositionFormat.later(head, other.head), stored.plus(other.stored, sameUser),
        PositionFormat.later(marker, other.marker));
  }
}
