package io.ackpoint.core;

/**
 * The answer to a {@link CheckpointCommand}: the id it is answered, the head of its batch, and
 * whether that checkpoint still waits for replication (false for a retry of an id that is already
 * acknowledged, which no later event will announce again). The head is the least position that can
 * acknowledge it: a pending row raised by an overlapping batch keeps a later head of its own.
 */
public record CheckpointCreated(long writeCheckpoint, String replicationHead, boolean pending) implements CheckpointOutcome {
}
