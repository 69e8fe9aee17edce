package io.ackpoint.storage;

import io.ackpoint.core.PositionFormat;

/**
 * The greatest acknowledged id of a full user id, and the position its row was marked processed at
 * ({@code null} when storage no longer holds it: the row was raised to a later id since, which
 * keeps the acknowledged id but not where it was passed).
 */
public record Acknowledged(long writeCheckpoint, String position) {

  /** The greater id of the two, and of equal ones the later position; either may be null. */
  static Acknowledged greater(Acknowledged a, Acknowledged b) {
    if (a == null || b == null) {
      return a == null ? b : a;
    }
    if (a.writeCheckpoint != b.writeCheckpoint) {
      return a.writeCheckpoint > b.writeCheckpoint ? a : b;
    }
    return new Acknowledged(a.writeCheckpoint, PositionFormat.later(a.position, b.position));
  }
}
