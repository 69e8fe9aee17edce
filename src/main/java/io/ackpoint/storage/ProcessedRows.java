package io.ackpoint.storage;

import io.ackpoint.core.FullUserId;
import io.ackpoint.core.Reached;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/** Processed rows gathered by position, each position with the greatest id of each full user id (duplicates of older installs). */
final class ProcessedRows {

  private final TreeMap<String, Map<FullUserId, Long>> byPosition = new TreeMap<>();

  void add(String position, FullUserId user, long writeCheckpoint) {
    byPosition.computeIfAbsent(position, p -> new LinkedHashMap<>()).merge(user, writeCheckpoint, Math::max);
  }

  NavigableMap<String, List<Reached>> result() {
    NavigableMap<String, List<Reached>> result = new TreeMap<>();
    byPosition.forEach((position, users) -> {
      List<Reached> reached = new ArrayList<>(users.size());
      users.forEach((user, id) -> reached.add(new Reached(user, id)));
      result.put(position, reached);
    });
    return result;
  }
}
