package io.ackpoint.config;

import java.nio.file.Path;

/**
 * An invalid configuration. The message always names the offending key (or file), so that startup can stop
 * with a line an operator can act on.
 */
public final class ConfigException extends RuntimeException {

  public ConfigException(String key, String problem) {
    super("configuration key '" + key + "': " + problem);
  }

  private ConfigException(String message) {
    super(message);
  }

  /** The configuration file itself is wrong: not YAML, not readable, not a mapping of keys. */
  static ConfigException file(Path file, String problem) {
    return new ConfigException("configuration file " + file + ": " + problem);
  }

  /** An {@code ACKPOINT_*} environment variable that is wrong in itself (it names no key, say). */
  static ConfigException variable(String name, String problem) {
    return new ConfigException("environment variable " + name + " " + problem);
  }
}
