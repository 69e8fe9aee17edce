package io.ackpoint.http;

import io.vertx.core.Future;
import io.vertx.core.Promise;

/**
 * The one-round-trip await of {@code POST /sync/checkpoint-request?wait=S}: subscribed before the
 * checkpoint is created, so an acknowledgement that comes before the storage answer is not missed.
 * Completes with the checkpoint sequence once an id at or above the target is acknowledged, or with
 * {@code null} at the deadline.
 */
final class AckWaiter implements AckSubscriber {

  private final Promise<String> done = Promise.promise();
  private final long deadlineMillis;
  private long greatestSeen = -1;
  private String seenCheckpoint;
  private long target = -1;

  AckWaiter(long deadlineMillis) {
    this.deadlineMillis = deadlineMillis;
  }

  /** From now on, completes once {@code id} (or a greater one) is acknowledged. */
  Future<String> until(long id) {
    target = id;
    if (greatestSeen >= target) {
      done.tryComplete(seenCheckpoint);
    }
    return done.future();
  }

  /** Storage says {@code id} is already acknowledged (a retry of a processed checkpoint). */
  void acknowledgedAlready(long id, String checkpoint) {
    reached(id, checkpoint);
  }

  @Override
  public void reached(long writeCheckpoint, String checkpoint) {
    if (writeCheckpoint > greatestSeen) {
      greatestSeen = writeCheckpoint;
      seenCheckpoint = checkpoint;
    }
    if (target >= 0 && greatestSeen >= target) {
      done.tryComplete(seenCheckpoint);
    }
  }

  @Override
  public void tick(long nowMillis) {
    if (nowMillis >= deadlineMillis) {
      done.tryComplete(null);
    }
  }

  void cancel() {
    done.tryComplete(null);
  }
}
