package io.ackpoint.core;

/**
 * What the head callback tells the source: whether a marker must be forced so that replication
 * observes a position at or beyond the head even on an idle database.
 */
public interface MarkerDecision {

  boolean shouldAdvance();
}
