package io.ackpoint.bench;

import java.util.HashMap;
import java.util.Map;

/** The {@code --key value} options of the bench's runners, by key without its dashes. */
final class Options {

  private Options() {
  }

  static Map<String, String> parse(String[] args) {
    Map<String, String> options = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      options.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    return options;
  }
}
