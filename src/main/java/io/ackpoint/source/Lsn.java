package io.ackpoint.source;

/**
 * PostgreSQL log sequence numbers as heads: {@code %08X/%08X}, so that the lexical order of two heads
 * is their replication order ({@code 0/9} sorts after {@code 0/10} as text, {@code 00000000/00000009} does not).
 */
public final class Lsn {

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
    return String.format("%08X/%08X", lsn >>> 32, lsn & 0xFFFFFFFFL);
  }

  public static long parse(String head) {
    int slash = head.indexOf('/');
    return (Long.parseLong(head.substring(0, slash), 16) << 32) | Long.parseLong(head.substring(slash + 1), 16);
  }
}
