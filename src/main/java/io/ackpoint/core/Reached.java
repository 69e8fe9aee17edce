package io.ackpoint.core;

/** Replication has just passed a full user id's checkpoint: the greatest of its ids passed at once. */
public record Reached(FullUserId user, long writeCheckpoint) {
}
