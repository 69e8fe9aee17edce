package io.ackpoint.ack;

import io.ackpoint.core.GreatestIds;
import io.ackpoint.core.PendingCheckpoints.Pending;
import io.ackpoint.core.Reached;

import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Checkpoints of the batches of every node still waiting for replication, by head, so that the engine
 * tells their users as soon as an observed position passes their head instead of after the
 * statement that records it (which may be queued behind the one running).
 *
 * <p>Why that is safe: a position the engine observes is one replication reached (its source
 * decoded it, or external progress was checked against the source), and a checkpoint's head was
 * read after its client's write; so a position at or past the head acknowledges the write, whether
 * storage has recorded it yet or not. Storage records it with the statement for that position or a
 * later one, also if the row was raised meanwhile (only storage that promises this answers heads,
 * see {@code WriteOutcome.Stored#pendingHead}). Until then a node answers a new stream's first line
 * from its own record of what was released ({@code ReleasedAhead}).
 *
 * <p>Bounded: beyond {@link #LIMIT} checkpoints (a source that stopped, a source replaced by one
 * at earlier positions) new ones are not kept; the statement alone tells their users.
 */
final class EarlyReleases {

  static final int LIMIT = 100_000;

  private final PriorityQueue<Pending> byHead = new PriorityQueue<>(Comparator.comparing(Pending::head));

  /** Keeps {@code pending} for a later position; answers false if it was not kept. */
  boolean keep(Pending pending) {
    if (byHead.size() >= LIMIT) {
      return false;
    }
    byHead.add(pending);
    return true;
  }

  /** Takes every checkpoint whose head {@code position} passes: one per user, its greatest id. */
  List<Reached> passedBy(String position) {
    if (byHead.isEmpty() || byHead.peek().head().compareTo(position) > 0) {
      return List.of();
    }
    GreatestIds users = new GreatestIds();
    while (!byHead.isEmpty() && byHead.peek().head().compareTo(position) <= 0) {
      Pending p = byHead.poll();
      users.add(p.user(), p.checkpoint());
    }
    return users.reached();
  }

  int size() {
    return byHead.size();
  }
}
