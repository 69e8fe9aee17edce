package io.ackpoint.storage;

import io.ackpoint.core.FullUserId;
import io.ackpoint.core.GreatestIds;
import io.ackpoint.core.Reached;

import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;

/** Processed rows gathered by position, each position with the greatest id of each full user id (duplicates of older installs). */
final class ProcessedRows {

  private final TreeMap<String, GreatestIds> byPosition = new TreeMap<>();

  void add(String position, FullUserId user, long writeCheckpoint) {
    byPosition.computeIfAbsent(position, p -> new GreatestIds()).add(user, writeCheckpoint);
  }

  NavigableMap<String, List<Reached>> result() {
    NavigableMap<String, List<Reached>> result = new TreeMap<>();
    byPosition.forEach((position, users) -> result.put(position, users.reached()));
    return result;
  }
}
