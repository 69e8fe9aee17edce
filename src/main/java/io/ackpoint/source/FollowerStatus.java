package io.ackpoint.source;

import io.ackpoint.core.ReplicationStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The follower's state for readiness, written where its stream runs and read by its event loop. A
 * failure is logged in one line, without a stack trace, when its cause changes, not on every retry:
 * a slot held by another process would otherwise log every few seconds for as long as it lasts.
 */
final class FollowerStatus {

  private static final Logger LOG = LoggerFactory.getLogger(FollowerStatus.class);

  /** What is followed, for the log: "replication slot ackpoint", "change stream on app._ackpoint_checkpoints". */
  private final String followed;
  private final ReplicationListener listener;
  private volatile ReplicationStatus current = ReplicationStatus.notReady("the replication follower has not connected yet");
  /** The reason last logged; null while following. Only the thread that runs the stream touches it. */
  private String logged;

  FollowerStatus(String followed, ReplicationListener listener) {
    this.followed = followed;
    this.listener = listener;
  }

  ReplicationStatus current() {
    return current;
  }

  void following() {
    current = ReplicationStatus.READY;
    listener.followerUp(true);
    if (logged != null) {
      LOG.info("replication follower running again on {}", followed);
    } else {
      LOG.info("following {}", followed);
    }
    logged = null;
  }

  void failed(String reason) {
    current = ReplicationStatus.notReady(reason);
    listener.followerUp(false);
    if (!reason.equals(logged)) {
      LOG.warn("replication follower not running, retrying: {}", reason);
      logged = reason;
    }
  }
}
