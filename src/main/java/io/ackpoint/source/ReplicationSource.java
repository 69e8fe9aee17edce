package io.ackpoint.source;

import io.ackpoint.core.MarkerDecision;
import io.ackpoint.core.PositionFormat;
import io.vertx.core.Future;

import java.util.function.Function;

/**
 * The source database whose replication stream Ackpoint follows. Implementations share their
 * connections with every verticle of the process; whoever made them closes them.
 */
public interface ReplicationSource {

  /** How this source writes positions; every head and position it gives is in canonical form. */
  PositionFormat positions();

  /** The current replication head, as a string whose lexical order is replication order. */
  Future<String> readHead();

  /**
   * Whether a head read after another one completed is never before it while the source is the same
   * server, so that one before it means that the source went back (restored, or replaced by a server
   * that was behind). PostgreSQL's WAL position is; a MongoDB cluster time is gossiped by whichever
   * router answers, and a cluster's clock does not go back when a member that was behind takes over.
   */
  default boolean headsOrdered() {
    return false;
  }

  /** The warning for a head read after {@code applied} had been applied, and before it: the source went back. */
  static String wentBack(String applied, String head) {
    return "the source's head went back from " + applied + " to " + head + " (restored to an earlier point, or replaced by"
        + " a server that was behind): acknowledgements start over at the new source's positions";
  }

  /** Writes a marker to the replication stream, so that it moves past every head read before. */
  Future<Void> forceMarker();

  /**
   * Reads the head, hands it to {@code persist}, then forces a marker if the result asks for one.
   * The marker comes after the callback, never before: a marker forced before the checkpoint is
   * stored could be replicated before the row exists, and the acknowledgement would wait for the
   * next, unrelated, write to the source.
   */
  default <R extends MarkerDecision> Future<R> createReplicationHead(Function<String, Future<R>> persist) {
    return readHead()
        .compose(persist)
        .compose(result -> result.shouldAdvance() ? forceMarker().map(result) : Future.succeededFuture(result));
  }
}
