package io.ackpoint.source;

import io.ackpoint.core.ReplicationStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The follower's state for readiness, written where its stream runs and read by its event loop. A
 * failure is logged in one line, without a stack trace unless it is a bug's, when its cause changes,
 * not on every retry: a slot held by another process would otherwise log every few seconds for as
 * long as it lasts.
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
    failed(reason, null);
  }

  /** A failure to reach the source at all, which another node of a cluster may not have (see {@link ReplicationStatus#cutOff}). */
  void cutOff(String reason) {
    failed(ReplicationStatus.cutOff(reason), null);
  }

  /**
   * The follower was stopped (a node stepping down, or stopping): not a failure, so nothing is logged,
   * but it follows nothing any more, and the metrics say so (a node that handed the slot over kept
   * reporting that it followed it, beside the node that took over).
   */
  void stopped() {
    current = ReplicationStatus.notReady("the replication follower has stopped");
    tellNotFollowing();
  }

  /** A failure that is not the source's doing (a bug): its trace is logged too, once per cause as well. */
  void failed(String reason, Throwable unexpected) {
    failed(ReplicationStatus.notReady(reason), unexpected);
  }

  private void failed(ReplicationStatus status, Throwable unexpected) {
    current = status;
    String reason = status.reason();
    if (!reason.equals(logged)) {
      if (unexpected == null) {
        LOG.warn("replication follower not running, retrying: {}", reason);
      } else {
        LOG.error("replication follower not running, retrying: {}", reason, unexpected);
      }
      logged = reason;
    }
    tellNotFollowing();
  }

  /** The metrics must not stop the follower from retrying, nor a stop from saving and closing. */
  private void tellNotFollowing() {
    try {
      listener.followerUp(false);
    } catch (RuntimeException | Error e) {
      LOG.warn("could not tell the metrics that the follower stopped: {}", e.toString());
    }
  }
}
