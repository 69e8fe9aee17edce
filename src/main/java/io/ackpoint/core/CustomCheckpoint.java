package io.ackpoint.core;

/**
 * A checkpoint the application wrote into its custom checkpoint table, as seen on the replication
 * stream: the full user id, its id, and whether the row is a (temporary) checkpoint request.
 */
public record CustomCheckpoint(FullUserId user, long checkpoint, boolean request) {
}
