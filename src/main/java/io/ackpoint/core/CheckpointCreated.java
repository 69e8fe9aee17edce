package io.ackpoint.core;

/**
 * The answer to a {@link CheckpointCommand}: the id it is answered, the head stored with the user's
 * checkpoint, and whether that checkpoint still waits for replication (false for a retry of an id
 * that is already acknowledged, which no later event will announce again).
 */
public record CheckpointCreated(long writeCheckpoint, String replicationHead, boolean pending) {
}
