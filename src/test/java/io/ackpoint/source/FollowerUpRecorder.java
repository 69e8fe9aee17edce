package io.ackpoint.source;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** What a follower tells the metrics about itself (following or not), in order. */
final class FollowerUpRecorder implements ReplicationListener {

  private final List<Boolean> told = new CopyOnWriteArrayList<>();
  private final CompletableFuture<Void> following = new CompletableFuture<>();

  @Override
  public void followerUp(boolean up) {
    told.add(up);
    if (up) {
      following.complete(null);
    }
  }

  /** Until the follower first said it follows. */
  void awaitFollowing() throws Exception {
    following.get(30, TimeUnit.SECONDS);
  }

  /** What it said last. */
  boolean last() {
    return told.get(told.size() - 1);
  }
}
