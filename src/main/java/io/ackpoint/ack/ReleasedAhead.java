package io.ackpoint.ack;

import io.ackpoint.core.FullUserId;
import io.ackpoint.core.Reached;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What this node heard released ahead of storage ({@link EarlyReleases}) and has not yet heard
 * recorded: a stream opened in between starts from here, not from storage's older answer, so that
 * no client is told less than a stream of its user was told already. An entry goes once the
 * statement named by its release (or a later one of the same engine) announces, whoever it
 * carries: that statement saw the release's batch and committed before announcing, so storage
 * answers the id from then on. It also goes once any announcement carries its user at that id or a
 * greater one: the way out for a release whose engine died before its statement announced. One
 * entry per user at most. Used on the acknowledgement verticle's event loop only.
 */
final class ReleasedAhead {

  /**
   * {@code checkpoint}: the sequence it was released at, which a stream starting from it is told at
   * least; {@code recordedBy}: the statement that records it, null if not known.
   */
  record Release(long writeCheckpoint, long checkpoint, StatementNumber recordedBy) {
  }

  private final Map<FullUserId, Release> byUser = new HashMap<>();

  void released(List<Reached> users, long checkpoint, StatementNumber recordedBy) {
    for (Reached r : users) {
      byUser.merge(r.user(), new Release(r.writeCheckpoint(), checkpoint, recordedBy),
          (old, now) -> now.writeCheckpoint() > old.writeCheckpoint() ? now : old);
    }
  }

  /** An announcement of {@code users}, by the statement {@code by} (null if read back from storage). */
  void recorded(List<Reached> users, StatementNumber by) {
    if (byUser.isEmpty()) {
      return;
    }
    if (by != null) {
      byUser.values().removeIf(release -> release.recordedBy() != null && release.recordedBy().coveredBy(by));
    }
    for (Reached r : users) {
      byUser.computeIfPresent(r.user(), (user, release) -> release.writeCheckpoint() <= r.writeCheckpoint() ? null : release);
    }
  }

  /** The release of {@code user} not yet recorded, or null. */
  Release of(FullUserId user) {
    return byUser.get(user);
  }

  int size() {
    return byUser.size();
  }
}
