package io.ackpoint.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code ${VAR}} in the values of the configuration file: replaced by the environment variable
 * {@code VAR}, or by {@code default} in {@code ${VAR:-default}}; {@code $${} stands for a literal
 * {@code ${}. A variable that is not set and has no default stops start-up, naming the key and the
 * variable, rather than leaving a value the operator never meant.
 */
final class Substitution {

  private static final Pattern REFERENCE = Pattern.compile("\\$\\$\\{|\\$\\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?}");

  private Substitution() {
  }

  static JsonObject apply(JsonObject tree, Map<String, String> env) {
    JsonObject out = new JsonObject();
    for (Map.Entry<String, Object> e : tree) {
      out.put(e.getKey(), value(e.getKey(), e.getValue(), env));
    }
    return out;
  }

  private static Object value(String key, Object value, Map<String, String> env) {
    if (value instanceof JsonObject object) {
      JsonObject out = new JsonObject();
      for (Map.Entry<String, Object> e : object) {
        out.put(e.getKey(), value(key + "." + e.getKey(), e.getValue(), env));
      }
      return out;
    }
    if (value instanceof JsonArray array) {
      JsonArray out = new JsonArray();
      for (Object item : array) {
        out.add(value(key, item, env));
      }
      return out;
    }
    return value instanceof String text ? substitute(key, text, env) : value;
  }

  private static String substitute(String key, String text, Map<String, String> env) {
    Matcher m = REFERENCE.matcher(text);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String replacement;
      if (m.group(1) == null) {
        replacement = "${";
      } else if (env.get(m.group(1)) != null) {
        replacement = env.get(m.group(1));
      } else if (m.group(2) != null) {
        replacement = m.group(3);
      } else {
        throw new ConfigException(key, "refers to the environment variable " + m.group(1) + ", which is not set"
            + " (give a default with ${" + m.group(1) + ":-value})");
      }
      m.appendReplacement(out, Matcher.quoteReplacement(replacement));
    }
    m.appendTail(out);
    return out.toString();
  }
}
