package io.ackpoint.storage;

/**
 * What one bounded compaction statement did: how many rows it deleted, and where the next one
 * starts ({@code null}: the compaction is complete). The position means something only to the
 * storage that answered it.
 */
public record CompactionStep(int deleted, Long next) {

  /** Where a compaction starts. */
  public static final long START = 0;
}
