package io.ackpoint.source;

import io.ackpoint.core.PositionFormat;

/**
 * PostgreSQL log sequence numbers as heads: {@code %08X/%08X}, so that the lexical order of two heads
 * is their replication order ({@code 0/9} sorts after {@code 0/10} as text, {@code 00000000/00000009} does not).
 */
public final class Lsn {

  /** PostgreSQL positions: canonical {@code %08X/%08X}, ordinal the LSN itself (bytes of WAL). */
  public static final PositionFormat FORMAT = new PositionFormat() {
    @Override
    public String canonical(String text) {
      return normalize(text);
    }

    @Override
    public long ordinal(String position) {
      return parse(position);
    }
  };

  private Lsn() {
  }

  /** Formats the {@code X/Y} text that PostgreSQL prints for an {@code pg_lsn}. */
  public static String format(String pgLsn) {
    int slash = pgLsn.indexOf('/');
    if (slash <= 0 || slash == pgLsn.length() - 1) {
      throw new IllegalArgumentException("not an LSN: " + pgLsn);
    }
    long high = Long.parseLong(pgLsn.substring(0, slash), 16);
    long low = Long.parseLong(pgLsn.substring(slash + 1), 16);
    return format((high << 32) | low);
  }

  public static String format(long lsn) {
    // By hand, not String.format, which parses its pattern on every call: this runs for every position.
    char[] text = new char[17];
    for (int i = 0; i < 8; i++) {
      text[i] = HEX[(int) (lsn >>> (60 - 4 * i)) & 0xF];
      text[9 + i] = HEX[(int) (lsn >>> (28 - 4 * i)) & 0xF];
    }
    text[8] = '/';
    return new String(text);
  }

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private static final java.util.regex.Pattern PG_LSN = java.util.regex.Pattern.compile("[0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8}");

  /**
   * A position given by someone else ({@code 16/B374D848} as PostgreSQL prints it, or already padded)
   * in head form, or {@code null} when it is not an LSN at all.
   */
  public static String normalize(String position) {
    return position != null && PG_LSN.matcher(position).matches() ? format(position.toUpperCase(java.util.Locale.ROOT)) : null;
  }

  public static long parse(String head) {
    int slash = head.indexOf('/');
    return (Long.parseLong(head.substring(0, slash), 16) << 32) | Long.parseLong(head.substring(slash + 1), 16);
  }
}
