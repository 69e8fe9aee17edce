package io.ackpoint.batch;

import io.vertx.core.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.Function;

/**
 * Finds a source whose position went back: restored to an earlier point, or replaced by a standby
 * that was behind, while Ackpoint ran on. On one source a head read that begins after another one
 * completed is at or after it, whatever the connections; a head before it means the source went
 * back. The positions the acknowledgement engine applied are then ahead of every head the new
 * source gives, and it would take each checkpoint stored at one for passed already: told at once,
 * before replication reached it. So the batch that finds it asks the engine to start over
 * ({@code rewound}), and until the engine has answered, no batch hands its pending checkpoints to it:
 * they are acknowledged from storage by the engine's statements, once a position passes their heads.
 * Used on the batcher's event loop.
 */
final class SourceRewinds {

  private static final Logger LOG = LoggerFactory.getLogger(SourceRewinds.class);

  private final Function<String, Future<?>> rewound;
  /** The latest head of a batch that completed, "" before the first. */
  private String floor = "";
  /** The engine's answer to the last rewind asked of it. */
  private Future<?> answered = Future.succeededFuture();

  SourceRewinds(Function<String, Future<?>> rewound) {
    this.rewound = rewound;
  }

  /** To be read as a batch begins, and given back with its head ({@link #mayRelease}). */
  String floor() {
    return floor;
  }

  /**
   * Whether the pending checkpoints of a batch stored at {@code head} ("" if it stored none), which
   * began when the floor was {@code floorAtStart}, may go to the engine.
   */
  boolean mayRelease(String floorAtStart, String head) {
    if (!head.isEmpty() && head.compareTo(floorAtStart) < 0) {
      LOG.warn("the source's head went back from {} to {} (restored to an earlier point, or replaced by a server that"
          + " was behind): acknowledgements start over at the new source's positions", floorAtStart, head);
      floor = head;
      answered = rewound.apply(head);
      return false;
    }
    if (head.compareTo(floor) > 0) {
      floor = head;
    }
    return answered.isComplete();
  }
}
