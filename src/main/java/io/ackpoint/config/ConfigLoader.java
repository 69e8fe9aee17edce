package io.ackpoint.config;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Builds the configuration from three layers: the built-in defaults (which also define the set of
 * known keys), the YAML file ({@code conf/ackpoint.yaml} or {@code $ACKPOINT_CONFIG}), and
 * {@code ACKPOINT_*} environment variables.
 */
public final class ConfigLoader {

  public static final String CONFIG_FILE_VARIABLE = "ACKPOINT_CONFIG";
  public static final Path DEFAULT_CONFIG_FILE = Path.of("conf", "ackpoint.yaml");
  private static final String ENV_PREFIX = "ACKPOINT_";
  /** Variables with the prefix that are not configuration keys. */
  private static final Set<String> NON_KEY_VARIABLES = Set.of(CONFIG_FILE_VARIABLE);
  /** A key given twice is refused: YAML would keep the last silently, a second {@code http:} block replacing the first whole. */
  private static final YAMLMapper YAML = YAMLMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
  /** The same for a variable's JSON value ({@code ACKPOINT_AUTH_JWKS='{"keys":[...]}'}). */
  private static final JsonMapper JSON = JsonMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

  private ConfigLoader() {
  }

  /** Loads the configuration of this process from its file and environment. */
  public static AckpointConfig load(Map<String, String> env) {
    return resolve(loadJson(env), Map.of());
  }

  /**
   * The configuration of this process as the keys of {@code conf/ackpoint.yaml}: its file (or
   * {@code $ACKPOINT_CONFIG}) with the {@code ACKPOINT_*} variables applied, every key checked to be
   * known, no value validated yet (that is {@link #resolve}'s, or {@code AckpointOptions}').
   */
  public static JsonObject loadJson(Map<String, String> env) {
    String explicit = env.get(CONFIG_FILE_VARIABLE);
    Path file = configFile(env);
    JsonObject fileLayer;
    if (Files.exists(file)) {
      fileLayer = Substitution.apply(readYaml(file), env);
    } else if (explicit != null && !explicit.isBlank()) {
      throw new ConfigException(CONFIG_FILE_VARIABLE, "file " + file + " does not exist");
    } else {
      fileLayer = new JsonObject();
    }
    return layered(fileLayer, env);
  }

  /** Resolves a configuration given as JSON (the file layer) plus environment overrides. */
  public static AckpointConfig resolve(JsonObject fileLayer, Map<String, String> env) {
    return ConfigBinder.bind(new ConfigReader(layered(fileLayer, env)));
  }

  /** The defaults, overlaid by {@code fileLayer}, then by the environment; unknown keys and variables refused. */
  private static JsonObject layered(JsonObject fileLayer, Map<String, String> env) {
    JsonObject defaults = defaults();
    JsonObject merged = defaults.copy();
    overlay(defaults, merged, fileLayer, "");
    Set<String> known = new HashSet<>(NON_KEY_VARIABLES);
    applyEnvironment(defaults, merged, env, "", known);
    refuseUnknownVariables(env, known);
    return merged;
  }

  /**
   * A mistyped variable ({@code ACKPOINT_HTTP_PROT}) would otherwise be ignored in silence, and the
   * service would run on a default the operator meant to change.
   */
  private static void refuseUnknownVariables(Map<String, String> env, Set<String> known) {
    for (String variable : new TreeSet<>(env.keySet())) {
      if (variable.startsWith(ENV_PREFIX) && !known.contains(variable)) {
        String closest = known.stream().min(Comparator.comparingInt(k -> editDistance(k, variable))).orElseThrow();
        throw ConfigException.variable(variable, "names no configuration key"
            + (editDistance(closest, variable) <= 3 ? " (did you mean " + closest + "?)" : "")
            + "; every key of src/main/resources/ackpoint-defaults.yaml has one, named ACKPOINT_ + its path");
      }
    }
  }

  private static int editDistance(String a, String b) {
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
      }
      int[] swap = previous;
      previous = current;
      current = swap;
    }
    return previous[b.length()];
  }

  /** The configuration file this process reads: {@code $ACKPOINT_CONFIG}, or {@code conf/ackpoint.yaml} if it exists. */
  public static Path configFile(Map<String, String> env) {
    String explicit = env.get(CONFIG_FILE_VARIABLE);
    return explicit == null || explicit.isBlank() ? DEFAULT_CONFIG_FILE : Path.of(explicit);
  }

  static JsonObject defaults() {
    try (InputStream in = ConfigLoader.class.getResourceAsStream("/ackpoint-defaults.yaml")) {
      if (in == null) {
        throw new IllegalStateException("ackpoint-defaults.yaml is missing from the class path");
      }
      return new JsonObject(toMap(YAML.readValue(in, Map.class)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static JsonObject readYaml(Path file) {
    try {
      // A file without a key (empty, or comments only) is a tree of nothing: every default.
      JsonNode tree = YAML.readTree(file.toFile());
      if (tree == null || tree.isMissingNode() || tree.isNull()) {
        return new JsonObject();
      }
      if (!tree.isObject()) {
        throw ConfigException.file(file, "the top level must be a mapping of keys");
      }
      return new JsonObject(toMap(YAML.treeToValue(tree, Map.class)));
    } catch (JacksonException e) {
      throw ConfigException.file(file, "not valid YAML: " + e.getOriginalMessage());
    } catch (IOException e) {
      // A directory, a file without read permission: the operator's to fix, as a message.
      throw ConfigException.file(file, "cannot be read: " + e.getMessage());
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> toMap(Map<?, ?> map) {
    return (Map<String, Object>) map;
  }

  /** A leaf is a scalar, a list, or an object whose default is empty (such as the inline JWKS). */
  private static boolean isSection(Object defaultValue) {
    return defaultValue instanceof JsonObject object && !object.isEmpty();
  }

  private static void overlay(JsonObject defaults, JsonObject target, JsonObject layer, String prefix) {
    for (Map.Entry<String, Object> entry : layer) {
      String key = prefix + entry.getKey();
      if (!defaults.containsKey(entry.getKey())) {
        throw new ConfigException(key, "unknown key");
      }
      Object defaultValue = defaults.getValue(entry.getKey());
      if (isSection(defaultValue)) {
        if (!(entry.getValue() instanceof JsonObject section)) {
          throw new ConfigException(key, "must be a mapping of keys");
        }
        overlay((JsonObject) defaultValue, target.getJsonObject(entry.getKey()), section, key + ".");
      } else {
        target.put(entry.getKey(), entry.getValue());
      }
    }
  }

  private static void applyEnvironment(JsonObject defaults, JsonObject target, Map<String, String> env, String prefix,
                                       Set<String> known) {
    for (String name : defaults.fieldNames()) {
      String key = prefix + name;
      Object defaultValue = defaults.getValue(name);
      if (isSection(defaultValue)) {
        applyEnvironment((JsonObject) defaultValue, target.getJsonObject(name), env, key + ".", known);
        continue;
      }
      known.add(environmentVariable(key));
      String value = env.get(environmentVariable(key));
      if (value != null) {
        target.put(name, parseEnvironmentValue(key, defaultValue, value));
      }
    }
  }

  /** {@code http.port} is overridden by {@code ACKPOINT_HTTP_PORT}. */
  public static String environmentVariable(String key) {
    return ENV_PREFIX + key.replace('.', '_').toUpperCase(Locale.ROOT);
  }

  private static Object parseEnvironmentValue(String key, Object defaultValue, String value) {
    try {
      if (defaultValue instanceof Integer) {
        return parseInteger(key, value.trim());
      }
      if (defaultValue instanceof Boolean) {
        return parseBoolean(key, value.trim());
      }
      if (defaultValue instanceof JsonArray) {
        String trimmed = value.trim();
        if (trimmed.startsWith("[")) {
          return new JsonArray(JSON.readValue(trimmed, List.class));
        }
        return new JsonArray(trimmed.isEmpty() ? List.of() : Arrays.stream(trimmed.split(",")).map(String::trim).toList());
      }
      if (defaultValue instanceof JsonObject) {
        return new JsonObject(toMap(JSON.readValue(value, Map.class)));
      }
      return value;
    } catch (NumberFormatException | JacksonException e) {
      throw new ConfigException(key, "environment variable " + environmentVariable(key) + " has an invalid value"
          + (e instanceof JacksonException json ? ": " + json.getOriginalMessage() : ""));
    }
  }

  private static int parseInteger(String key, String value) {
    try {
      return Integer.parseInt(value);
    } catch (NumberFormatException e) {
      String shown = value.length() > 40 ? value.substring(0, 40) + "..." : value;
      throw new ConfigException(key, "environment variable " + environmentVariable(key) + " must be an integer"
          + (value.matches("[+-]?\\d+") ? " from " + Integer.MIN_VALUE + " to " + Integer.MAX_VALUE : "") + ", was '" + shown + "'");
    }
  }

  private static boolean parseBoolean(String key, String value) {
    return switch (value.toLowerCase(Locale.ROOT)) {
      case "true", "yes", "on", "1" -> true;
      case "false", "no", "off", "0" -> false;
      default -> throw new ConfigException(key, "'" + value + "' is not a boolean");
    };
  }

}
