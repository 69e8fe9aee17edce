package io.ackpoint.storage;

/** A checkpoint that replication has just passed: its full user id and id. */
public record Reached(String userId, long writeCheckpoint) {
}
