package io.ackpoint.source;

import io.ackpoint.core.PositionFormat;
import io.vertx.core.json.JsonObject;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * MongoDB cluster times (BSON timestamps: seconds, then an increment within the second) as heads:
 * the 64-bit value {@code seconds << 32 | increment} in sixteen upper-case hex digits. Fixed width
 * makes lexical order the order of the timestamps, so heads compare as strings in memory, in
 * PostgreSQL ({@code COLLATE "C"}) and in MongoDB ({@code $lte} on strings) alike; {@code Timestamp(1,
 * 4294967295)} sorts before {@code Timestamp(2, 0)}, which no decimal "seconds.increment" text does.
 */
public final class ClusterTime {

  /** MongoDB positions: canonical {@code %016X}, ordinal the 64-bit timestamp value. */
  public static final PositionFormat FORMAT = new PositionFormat() {
    @Override
    public String canonical(String text) {
      return text != null && HEX16.matcher(text).matches() ? text.toUpperCase(Locale.ROOT) : null;
    }

    @Override
    public long ordinal(String position) {
      return parse(position);
    }
  };

  private static final Pattern HEX16 = Pattern.compile("[0-9A-Fa-f]{16}");
  /** The key-string type byte with which a resume token's {@code _data} starts: a timestamp follows. */
  private static final String TOKEN_TIMESTAMP = "82";

  private ClusterTime() {
  }

  /** The position of a timestamp; both parts are unsigned 32-bit numbers, as BSON stores them. */
  public static String of(long seconds, long increment) {
    return format(((seconds & 0xFFFFFFFFL) << 32) | (increment & 0xFFFFFFFFL));
  }

  public static String format(long value) {
    return String.format("%016X", value);
  }

  public static long parse(String position) {
    return Long.parseUnsignedLong(position, 16);
  }

  /**
   * The position of a BSON timestamp as the Vert.x client decodes it,
   * {@code {"$timestamp": {"t": seconds, "i": increment}}}, or {@code null} when {@code value} is not one.
   */
  public static String fromTimestamp(Object value) {
    if (value instanceof JsonObject json && json.getValue("$timestamp") instanceof JsonObject ts
        && ts.getValue("t") instanceof Number t && ts.getValue("i") instanceof Number i) {
      return of(t.longValue(), i.longValue());
    }
    return null;
  }

  /**
   * The cluster time a command reply carries ({@code $clusterTime.clusterTime}), or {@code null} when
   * the server keeps no logical clock (a standalone {@code mongod}, the test server).
   */
  public static String ofReply(JsonObject reply) {
    return reply != null && reply.getValue("$clusterTime") instanceof JsonObject gossip
        ? fromTimestamp(gossip.getValue("clusterTime")) : null;
  }

  /** The operation time of a command reply: when its write happened. {@code null} when not told. */
  public static String operationTime(JsonObject reply) {
    return reply == null ? null : fromTimestamp(reply.getValue("operationTime"));
  }

  /**
   * The cluster time a MongoDB resume token stands for, or {@code null} when it does not tell. From
   * MongoDB 4.2 on, {@code _data} is the hex of a key string that starts with the token's cluster
   * time: type byte {@code 0x82}, then seconds and increment as two big-endian 32-bit numbers. This is
   * how a post-batch resume token, which carries no {@code clusterTime} field, becomes a position.
   */
  public static String fromResumeToken(JsonObject token) {
    String data = token == null ? null : token.getValue("_data") instanceof String s ? s : null;
    if (data == null || data.length() < 18 || !data.regionMatches(true, 0, TOKEN_TIMESTAMP, 0, 2)) {
      return null;
    }
    return FORMAT.canonical(data.substring(2, 18));
  }
}
