package io.ackpoint.core;

/**
 * How a source writes its replication positions (a PostgreSQL LSN, a MongoDB cluster time): as text
 * in a canonical form whose lexical order is replication order, so that positions and heads compare
 * as strings everywhere, in memory and in storage.
 */
public interface PositionFormat {

  /** {@code text} in canonical form if it is a position of this source, else {@code null}. */
  String canonical(String text);

  /**
   * A number that grows with the position: the checkpoint sequence of the streams, and the unit in
   * which replication lag is told (bytes of WAL for PostgreSQL).
   */
  long ordinal(String position);

  /** The later of two positions in canonical form (of any source: they compare as text); either may be null. */
  static String later(String a, String b) {
    if (a == null || b == null) {
      return a == null ? b : a;
    }
    return a.compareTo(b) >= 0 ? a : b;
  }
}
