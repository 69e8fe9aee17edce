package io.ackpoint.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The checkpoints a stored batch left waiting for replication, each with the head replication must
 * pass for it: from the batcher to the acknowledgement engine (on whichever node runs it), which
 * releases each one as soon as an observed position passes its head. Only users whose storage
 * answered a head are here (see
 * {@link WriteOutcome.Stored#pendingHead()}). {@code storedNanos}: {@link System#nanoTime()} when
 * the batcher had the batch's answer, after its commit; from another node of a cluster, when this
 * node decoded the message ({@link PendingCheckpointsCodec}).
 */
public record PendingCheckpoints(List<Pending> checkpoints, long storedNanos) {

  public record Pending(FullUserId user, long checkpoint, String head) {
  }

  public PendingCheckpoints {
    checkpoints = List.copyOf(checkpoints);
  }

  public static PendingCheckpoints of(StoredBatch batch, long storedNanos) {
    List<Pending> pending = new ArrayList<>();
    for (Map.Entry<FullUserId, WriteOutcome> e : batch.outcomes().entrySet()) {
      if (e.getValue() instanceof WriteOutcome.Stored stored && stored.pending() && stored.pendingHead() != null) {
        pending.add(new Pending(e.getKey(), stored.checkpoint(), stored.pendingHead()));
      }
    }
    return new PendingCheckpoints(pending, storedNanos);
  }

  public boolean isEmpty() {
    return checkpoints.isEmpty();
  }
}
