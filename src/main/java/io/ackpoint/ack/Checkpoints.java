package io.ackpoint.ack;

import io.ackpoint.core.PositionFormat;

/**
 * Checkpoint sequence numbers: the {@code last_op_id} of the streams. A position's sequence number
 * is its ordinal (a PostgreSQL LSN as a number), which grows with every observed position and
 * survives restarts; it is bumped by one where two positions would share a number.
 */
final class Checkpoints {

  private final PositionFormat positions;
  private long current;

  Checkpoints(PositionFormat positions) {
    this.positions = positions;
  }

  /** The sequence number of a newly observed position (always greater than the previous one). */
  long next(String position) {
    current = Math.max(current + 1, positions.ordinal(position));
    return current;
  }
}
