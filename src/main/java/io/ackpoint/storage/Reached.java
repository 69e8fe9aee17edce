package io.ackpoint.storage;

import io.ackpoint.core.FullUserId;

/** Replication has just passed a full user id's checkpoint: the greatest of its ids passed at once. */
public record Reached(FullUserId user, long writeCheckpoint) {
}
