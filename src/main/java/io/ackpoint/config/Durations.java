package io.ackpoint.config;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses the human durations of the configuration: {@code 250ms}, {@code 30s}, {@code 60m}, {@code 12h}, {@code 30d}. */
public final class Durations {

  private static final Pattern DURATION = Pattern.compile("(\\d{1,12})(ms|s|m|h|d)");

  private Durations() {
  }

  public static Duration parse(String key, String text) {
    Matcher m = DURATION.matcher(text.trim());
    if (!m.matches()) {
      throw new ConfigException(key, "'" + text + "' is not a duration (use e.g. 250ms, 30s, 60m, 12h, 30d)");
    }
    long amount = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(amount);
      case "s" -> Duration.ofSeconds(amount);
      case "m" -> Duration.ofMinutes(amount);
      case "h" -> Duration.ofHours(amount);
      default -> Duration.ofDays(amount);
    };
  }
}
