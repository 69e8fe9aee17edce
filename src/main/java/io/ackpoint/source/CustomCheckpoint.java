package io.ackpoint.source;

/**
 * A checkpoint the application wrote into its custom checkpoint table, as seen on the replication
 * stream: the full user id, its id, and whether the row is a (temporary) checkpoint request.
 */
public record CustomCheckpoint(String userId, long checkpoint, boolean request) {
}
