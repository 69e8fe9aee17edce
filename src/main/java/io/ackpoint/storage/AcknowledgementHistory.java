package io.ackpoint.storage;

import io.ackpoint.core.Reached;
import io.vertx.core.Future;

import java.util.List;
import java.util.NavigableMap;

/**
 * The acknowledgements storage holds, read back for a node that missed their announcement (the
 * node that applied them died before announcing them, a statement's answer was lost, or the
 * cluster was split). Rare, and once at each node's start: a scan of the processed rows, not
 * indexed for it (an index on them would make every acknowledgement's update a non-HOT one).
 */
public interface AcknowledgementHistory {

  /**
   * The checkpoints processed at a position at or after {@code from} and at or before {@code upTo}
   * (no upper bound when null), by position in replication order, each position with the greatest id
   * of every full user id processed at it.
   */
  Future<NavigableMap<String, List<Reached>>> processedFrom(String from, String upTo);

  /** The latest position any checkpoint is processed at, "" when none is. */
  Future<String> latestProcessed();
}
