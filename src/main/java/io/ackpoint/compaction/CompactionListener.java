package io.ackpoint.compaction;

/** Observes compaction (the metrics). */
public interface CompactionListener {

  CompactionListener NONE = deleted -> {
  };

  /** A compaction run deleted {@code deleted} expired checkpoint requests. */
  void compacted(long deleted);
}
