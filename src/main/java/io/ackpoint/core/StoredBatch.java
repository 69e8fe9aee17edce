package io.ackpoint.core;

import java.util.HashMap;
import java.util.Map;

/**
 * The outcome of storing one batch: what happened for each full user id, and whether any matched
 * checkpoint still waits for replication (then a marker must be forced).
 */
public record StoredBatch(Map<FullUserId, WriteOutcome> outcomes, boolean shouldAdvance) implements MarkerDecision {

  /** Both outcomes together: the batch was stored in parts. */
  public StoredBatch plus(StoredBatch other) {
    Map<FullUserId, WriteOutcome> all = new HashMap<>(outcomes);
    all.putAll(other.outcomes);
    return new StoredBatch(all, shouldAdvance || other.shouldAdvance);
  }
}
