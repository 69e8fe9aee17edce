package io.ackpoint.source;

/** Observes the replication follower (the metrics). */
public interface ReplicationListener {

  ReplicationListener NONE = new ReplicationListener() {
  };

  /** The follower is following its slot (true), or cannot (false). */
  default void followerUp(boolean up) {
  }

  /** The slot as the source sees it, read every {@code replication.status_interval}. */
  default void slotState(SlotState state) {
  }
}
