package io.ackpoint.batch;

/** The answer to a {@link CheckpointCommand}: the id storage holds after it, and the head stored with it. */
public record CheckpointCreated(long writeCheckpoint, String replicationHead) {
}
