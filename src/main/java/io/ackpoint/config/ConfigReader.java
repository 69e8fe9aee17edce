package io.ackpoint.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Typed access to a merged configuration tree by dotted key; every error names the key. */
final class ConfigReader {

  private final JsonObject root;

  ConfigReader(JsonObject root) {
    this.root = root;
  }

  private Object value(String key) {
    String[] parts = key.split("\\.");
    JsonObject node = root;
    for (int i = 0; i < parts.length - 1; i++) {
      node = node.getJsonObject(parts[i]);
    }
    return node.getValue(parts[parts.length - 1]);
  }

  String string(String key) {
    Object v = value(key);
    if (v == null) {
      return "";
    }
    if (v instanceof String || v instanceof Number || v instanceof Boolean) {
      return v.toString();
    }
    throw new ConfigException(key, "must be a string");
  }

  int integer(String key, int min, int max) {
    Object v = value(key);
    long n;
    if (v instanceof Integer || v instanceof Long) {
      n = ((Number) v).longValue();
    } else if (v instanceof String s && s.trim().matches("-?\\d{1,10}")) {
      n = Long.parseLong(s.trim());
    } else {
      throw new ConfigException(key, "must be an integer");
    }
    if (n < min || n > max) {
      throw new ConfigException(key, "must be between " + min + " and " + max + ", was " + n);
    }
    return (int) n;
  }

  boolean bool(String key) {
    Object v = value(key);
    if (v instanceof Boolean b) {
      return b;
    }
    throw new ConfigException(key, "must be true or false");
  }

  Duration duration(String key) {
    return Durations.parse(key, string(key));
  }

  JsonObject object(String key) {
    Object v = value(key);
    if (v instanceof JsonObject o) {
      return o;
    }
    throw new ConfigException(key, "must be a mapping");
  }

  List<String> stringList(String key) {
    Object v = value(key);
    if (v instanceof String s) {
      return s.isBlank() ? List.of() : List.of(s);
    }
    if (!(v instanceof JsonArray array)) {
      throw new ConfigException(key, "must be a list of strings");
    }
    List<String> out = new ArrayList<>();
    for (Object item : array) {
      if (!(item instanceof String s) || s.isBlank()) {
        throw new ConfigException(key, "must be a list of non-empty strings");
      }
      out.add(s);
    }
    return List.copyOf(out);
  }
}
