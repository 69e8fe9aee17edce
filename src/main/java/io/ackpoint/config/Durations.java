package io.ackpoint.config;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses the human durations of the configuration: {@code 250ms}, {@code 30s}, {@code 60m}, {@code 12h}, {@code 30d}. */
public final class Durations {

  private static final Pattern DURATION = Pattern.compile("(\\d{1,12})(ms|s|m|h|d)");
  /**
   * The longest duration taken, of any key: a hundred years means "never" well enough, and longer
   * ones overflow where they are used (a timeout in nanoseconds past 292 years, a retention's
   * cut-off before the first instant), failing a shutdown or every compaction long after start-up.
   */
  static final Duration LONGEST = Duration.ofDays(36_500);

  private Durations() {
  }

  public static Duration parse(String key, String text) {
    Matcher m = DURATION.matcher(text.trim());
    if (!m.matches()) {
      throw new ConfigException(key, "'" + text + "' is not a duration (use e.g. 250ms, 30s, 60m, 12h, 30d)");
    }
    long amount = Long.parseLong(m.group(1));
    Duration duration = switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(amount);
      case "s" -> Duration.ofSeconds(amount);
      case "m" -> Duration.ofMinutes(amount);
      case "h" -> Duration.ofHours(amount);
      default -> Duration.ofDays(amount);
    };
    return atMostLongest(key, duration);
  }

  /** {@code duration}, unless it is longer than {@link #LONGEST}. */
  static Duration atMostLongest(String key, Duration duration) {
    if (duration.compareTo(LONGEST) > 0) {
      throw new ConfigException(key, "is longer than " + LONGEST.toDays() + "d (a hundred years), the longest duration taken");
    }
    return duration;
  }
}
