package io.ackpoint.core;

import java.util.HashMap;
import java.util.Map;
import java.util.function.BinaryOperator;

/**
 * The outcome of storing one batch: what happened for each full user id, and whether any matched
 * checkpoint still waits for replication (then a marker must be forced).
 */
public record StoredBatch(Map<FullUserId, WriteOutcome> outcomes, boolean shouldAdvance) implements MarkerDecision {

  /** Both outcomes together: the batch was stored in parts, each user in one of them. */
  public StoredBatch plus(StoredBatch other) {
    return plus(other, (first, second) -> second);
  }

  /** Both outcomes together; a user stored in both parts is answered {@code sameUser} of its two outcomes. */
  public StoredBatch plus(StoredBatch other, BinaryOperator<WriteOutcome> sameUser) {
    Map<FullUserId, WriteOutcome> all = new HashMap<>(outcomes);
    other.outcomes.forEach((user, outcome) -> all.merge(user, outcome, sameUser));
    return new StoredBatch(all, shouldAdvance || other.shouldAdvance);
  }
}
