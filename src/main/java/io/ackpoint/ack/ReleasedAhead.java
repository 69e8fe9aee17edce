package io.ackpoint.ack;

import io.ackpoint.core.FullUserId;
import io.ackpoint.core.Reached;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What this node heard released ahead of storage ({@link EarlyReleases}) and has not yet heard
 * recorded: a stream opened in between starts from here, not from storage's older answer, so that
 * no client is told less than a stream of its user was told already. An entry goes once an
 * announcement of a recorded position carries its user at that id or a greater one (storage then
 * answers it, since such an announcement follows the statement's commit). One entry per user at
 * most; an id whose recording nobody announces (a row raised again whose id is then read back
 * without it) stays until a later one of its user is. Used on the acknowledgement verticle's event
 * loop only.
 */
final class ReleasedAhead {

  /** {@code checkpoint}: the sequence it was released at, which a stream starting from it is told at least. */
  record Release(long writeCheckpoint, long checkpoint) {
  }

  private final Map<FullUserId, Release> byUser = new HashMap<>();

  void released(List<Reached> users, long checkpoint) {
    for (Reached r : users) {
      byUser.merge(r.user(), new Release(r.writeCheckpoint(), checkpoint),
          (old, now) -> now.writeCheckpoint() > old.writeCheckpoint() ? now : old);
    }
  }

  void recorded(List<Reached> users) {
    if (byUser.isEmpty()) {
      return;
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
