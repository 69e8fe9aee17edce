package io.ackpoint.batch;

import io.ackpoint.core.PendingCheckpoints;
import io.ackpoint.source.ReplicationSource;
import io.vertx.core.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Hands each batch's pending checkpoints to the acknowledgement engine, and finds a source whose
 * position went back: restored to an earlier point, or replaced by a standby that was behind, while
 * Ackpoint ran on. On a source whose heads are ordered ({@link ReplicationSource#headsOrdered}) a
 * head read that begins after another one completed is at or after it, whatever the connections; a
 * head before it means that the source went back. The positions the engine applied are then ahead of
 * every head the new source gives, and it would take each checkpoint stored at one for passed
 * already: told at once, before replication reached it. So the batch that finds it asks the engine
 * to start over ({@code rewound}), and until the engine has answered, the batches' pending
 * checkpoints are kept back, then handed over (at most {@link #KEPT} batches' worth: the rest are
 * acknowledged from storage by the engine's statements, once a position passes their heads). A
 * request that fails is asked again with the next batch. Used on the batcher's event loop.
 */
final class SourceRewinds {

  private static final Logger LOG = LoggerFactory.getLogger(SourceRewinds.class);
  private static final int KEPT = 64;

  private final Consumer<PendingCheckpoints> released;
  /** Null for a source whose heads are not ordered: nothing is looked for. */
  private final Function<String, Future<?>> rewound;
  /** The latest head of a batch that completed, "" before the first. */
  private String floor = "";
  /** The floor at which the last rewind was found. */
  private String wentBackFrom = "";
  /** The engine's answer to the last rewind asked of it. */
  private Future<?> answered = Future.succeededFuture();
  private final Deque<PendingCheckpoints> kept = new ArrayDeque<>();

  SourceRewinds(Consumer<PendingCheckpoints> released, Function<String, Future<?>> rewound) {
    this.released = released;
    this.rewound = rewound;
  }

  /** To be read as a batch begins, and given back with its head ({@link #stored}). */
  String floor() {
    return floor;
  }

  /**
   * A batch that began when the floor was {@code floorAtStart} was stored at {@code head} ("" if it
   * stored none), leaving {@code waiting} pending.
   */
  void stored(String floorAtStart, String head, PendingCheckpoints waiting) {
    if (rewound != null && !head.isEmpty() && head.compareTo(floorAtStart) < 0) {
      LOG.warn(ReplicationSource.wentBack(floorAtStart, head));
      wentBackFrom = floorAtStart;
      floor = head;
      ask(head);
    } else if (head.compareTo(floor) > 0) {
      floor = head;
    }
    if (answered.succeeded() && kept.isEmpty()) {
      if (!waiting.isEmpty()) {
        released.accept(waiting);
      }
      return;
    }
    // Only a batch stored below the floor the rewind was found at, so on the new source: one that
    // completes later at a head beyond it may have been stored on the old one (it began before),
    // and its rows are left to storage.
    if (!waiting.isEmpty() && head.compareTo(wentBackFrom) < 0) {
      if (kept.size() == KEPT) {
        kept.poll();
      }
      kept.add(waiting);
    }
    if (answered.failed()) {
      ask(floor);
    }
  }

  private void ask(String head) {
    Future<?> answer = rewound.apply(head);
    answered = answer;
    answer.onSuccess(ok -> {
      // Only the latest request's answer hands over what was kept back.
      if (answered == answer) {
        kept.forEach(released);
        kept.clear();
      }
    });
  }
}
