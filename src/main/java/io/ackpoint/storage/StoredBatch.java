package io.ackpoint.storage;

import io.ackpoint.source.MarkerDecision;

import java.util.Map;

/**
 * The outcome of storing one batch: the id storage holds for each full user id after the write,
 * and whether any matched checkpoint still waits for replication (then a marker must be forced).
 */
public record StoredBatch(Map<String, Long> checkpoints, boolean shouldAdvance) implements MarkerDecision {
}
