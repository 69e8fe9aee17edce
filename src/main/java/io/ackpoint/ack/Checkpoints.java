package io.ackpoint.ack;

import io.ackpoint.source.Lsn;

import java.util.regex.Pattern;

/**
 * Checkpoint sequence numbers: the {@code last_op_id} of the streams. A PostgreSQL position is its
 * LSN as a number, which grows with every observed position and survives restarts; any other kind
 * of position is numbered by a counter.
 */
final class Checkpoints {

  private static final Pattern LSN = Pattern.compile("[0-9A-F]{8}/[0-9A-F]{8}");

  private long counter;
  private long current;

  /** The sequence number of a newly observed position (always greater than the previous one). */
  long next(String position) {
    long candidate = LSN.matcher(position).matches() ? Lsn.parse(position) : ++counter;
    current = Math.max(current + 1, candidate);
    counter = Math.max(counter, current);
    return current;
  }

  long current() {
    return current;
  }
}
