package io.ackpoint.config;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.ackpoint.auth.DevelopmentKey;
import io.ackpoint.config.AckpointConfig.AcknowledgementConfig;
import io.ackpoint.config.AckpointConfig.AuthConfig;
import io.ackpoint.config.AckpointConfig.BatchingConfig;
import io.ackpoint.config.AckpointConfig.CheckpointMode;
import io.ackpoint.config.AckpointConfig.CheckpointsConfig;
import io.ackpoint.config.AckpointConfig.CompactionConfig;
import io.ackpoint.config.AckpointConfig.CustomTable;
import io.ackpoint.config.AckpointConfig.DatabaseConfig;
import io.ackpoint.config.AckpointConfig.DatabaseType;
import io.ackpoint.config.AckpointConfig.EmbeddedConfig;
import io.ackpoint.config.AckpointConfig.HttpConfig;
import io.ackpoint.config.AckpointConfig.QueueLimits;
import io.ackpoint.config.AckpointConfig.ReplicationConfig;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
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
  private static final YAMLMapper YAML = new YAMLMapper();

  private ConfigLoader() {
  }

  /** Loads the configuration of this process from its file and environment. */
  public static AckpointConfig load(Map<String, String> env) {
    String explicit = env.get(CONFIG_FILE_VARIABLE);
    Path file = explicit == null || explicit.isBlank() ? DEFAULT_CONFIG_FILE : Path.of(explicit);
    if (!Files.exists(file)) {
      if (explicit != null && !explicit.isBlank()) {
        throw new ConfigException(CONFIG_FILE_VARIABLE, "file " + file + " does not exist");
      }
      return resolve(new JsonObject(), env);
    }
    return resolve(readYaml(file), env);
  }

  /** Resolves a configuration given as JSON (the file layer) plus environment overrides. */
  public static AckpointConfig resolve(JsonObject fileLayer, Map<String, String> env) {
    JsonObject defaults = defaults();
    JsonObject merged = defaults.copy();
    overlay(defaults, merged, fileLayer, "");
    Set<String> known = new HashSet<>(NON_KEY_VARIABLES);
    applyEnvironment(defaults, merged, env, "", known);
    refuseUnknownVariables(env, known);
    return bind(new ConfigReader(merged));
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
      Object parsed = YAML.readValue(file.toFile(), Object.class);
      if (parsed == null) {
        return new JsonObject();
      }
      if (!(parsed instanceof Map<?, ?> map)) {
        throw new ConfigException(file.toString(), "the top level must be a mapping of keys");
      }
      return new JsonObject(toMap(map));
    } catch (JacksonException e) {
      throw new ConfigException(file.toString(), "not valid YAML: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
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
        return Integer.parseInt(value.trim());
      }
      if (defaultValue instanceof Boolean) {
        return parseBoolean(key, value.trim());
      }
      if (defaultValue instanceof JsonArray) {
        String trimmed = value.trim();
        if (trimmed.startsWith("[")) {
          return new JsonArray(trimmed);
        }
        return new JsonArray(trimmed.isEmpty() ? List.of() : Arrays.stream(trimmed.split(",")).map(String::trim).toList());
      }
      if (defaultValue instanceof JsonObject) {
        return new JsonObject(value);
      }
      return value;
    } catch (NumberFormatException | DecodeException e) {
      throw new ConfigException(key, "environment variable " + environmentVariable(key) + " has an invalid value");
    }
  }

  private static boolean parseBoolean(String key, String value) {
    return switch (value.toLowerCase(Locale.ROOT)) {
      case "true", "yes", "on", "1" -> true;
      case "false", "no", "off", "0" -> false;
      default -> throw new ConfigException(key, "'" + value + "' is not a boolean");
    };
  }

  private static AckpointConfig bind(ConfigReader r) {
    HttpConfig http = new HttpConfig(
        r.string("http.host"),
        r.integer("http.port", 0, 65535),
        r.integer("http.instances", 0, 1024),
        r.integer("http.event_loops", 0, 1024),
        r.integer("http.body_limit", 64, 64 * 1024 * 1024),
        r.stringList("http.cors.allowed_origins"),
        queue(r, "http.queues.checkpointing"),
        queue(r, "http.queues.stream"),
        queue(r, "http.queues.api"));
    AuthConfig auth = new AuthConfig(
        r.stringList("auth.audience"),
        r.object("auth.jwks"),
        r.string("auth.jwks_uri"),
        positive(r, "auth.jwks_refresh_interval"),
        r.duration("auth.jwks_min_fetch_interval"),
        positive(r, "auth.jwks_fetch_timeout"),
        r.duration("auth.clock_skew"));
    if (auth.audiences().isEmpty()) {
      throw new ConfigException("auth.audience", "at least one audience is required");
    }
    if (auth.jwks().getJsonArray("keys", new JsonArray()).isEmpty() && auth.jwksUri().isBlank()) {
      throw new ConfigException("auth.jwks", "no keys: set auth.jwks or auth.jwks_uri");
    }
    Optional<String> developmentKid = DevelopmentKey.kidIn(auth.jwks());
    if (developmentKid.isPresent() && !DevelopmentKey.isLoopback(http.host())) {
      throw new ConfigException("auth.jwks", "holds the published development key with kid " + developmentKid.get()
          + " (anyone can sign tokens with it, it is in Ackpoint's repository); it is trusted only while http.host is"
          + " a loopback address (127.x.x.x, ::1, localhost), and http.host is " + http.host()
          + ": configure your own keys in auth.jwks or auth.jwks_uri");
    }
    return new AckpointConfig(
        http,
        auth,
        database(r, "source"),
        database(r, "storage"),
        new EmbeddedConfig(Path.of(r.string("embedded.data_dir")), r.integer("embedded.port", 0, 65535)),
        new BatchingConfig(r.bool("batching.enabled"), r.integer("batching.max_in_flight_batches", 1, 64),
            r.integer("batching.max_pending", 1, 10_000_000), positive(r, "batching.request_timeout")),
        replication(r),
        new AcknowledgementConfig(
            r.duration("acknowledgement.legacy_timeout"),
            r.duration("acknowledgement.max_wait"),
            r.duration("streams.keepalive_interval")),
        checkpoints(r),
        new CompactionConfig(positive(r, "compaction.interval"), r.integer("compaction.batch_size", 1, 100_000)),
        r.string("admin.token"));
  }

  private static final String IDENTIFIER = "[A-Za-z_][A-Za-z0-9_]{0,62}";

  private static CheckpointsConfig checkpoints(ConfigReader r) {
    CheckpointMode mode = switch (r.string("checkpoints.mode").toLowerCase(Locale.ROOT)) {
      case "managed" -> CheckpointMode.MANAGED;
      case "custom" -> CheckpointMode.CUSTOM;
      default -> throw new ConfigException("checkpoints.mode", "must be managed or custom");
    };
    Duration retention = positive(r, "checkpoints.request_retention");
    Long days = optionalPositive(r, "checkpoints.checkpoint_request_retention_days");
    Long minutes = optionalPositive(r, "checkpoints.checkpoint_request_retention_minutes");
    if (days != null || minutes != null) {
      retention = Duration.ofDays(days == null ? 0 : days).plusMinutes(minutes == null ? 0 : minutes);
    }
    CustomTable custom = new CustomTable(
        identifier(r, "custom.table", IDENTIFIER + "(\\." + IDENTIFIER + ")?", false),
        identifier(r, "custom.user_column", IDENTIFIER, false),
        identifier(r, "custom.checkpoint_column", IDENTIFIER, false),
        identifier(r, "custom.client_column", IDENTIFIER, true),
        identifier(r, "custom.request_column", IDENTIFIER, true),
        positive(r, "custom.store_timeout"));
    return new CheckpointsConfig(mode, retention, custom);
  }

  private static String identifier(ConfigReader r, String key, String pattern, boolean optional) {
    String value = r.string(key);
    if (value.isEmpty() && optional) {
      return null;
    }
    if (!value.matches(pattern)) {
      throw new ConfigException(key, "'" + value + "' is not a plain SQL identifier");
    }
    return value;
  }

  private static Duration positive(ConfigReader r, String key) {
    Duration d = r.duration(key);
    if (d.isZero() || d.isNegative()) {
      throw new ConfigException(key, "must be greater than zero");
    }
    return d;
  }

  private static Long optionalPositive(ConfigReader r, String key) {
    String value = r.string(key).trim();
    if (value.isEmpty()) {
      return null;
    }
    if (!value.matches("-?\\d{1,9}")) {
      throw new ConfigException(key, "must be a whole number");
    }
    long n = Long.parseLong(value);
    if (n <= 0) {
      throw new ConfigException(key, "must be greater than zero, was " + n);
    }
    return n;
  }

  private static ReplicationConfig replication(ConfigReader r) {
    Duration heartbeat = r.duration("replication.heartbeat_interval");
    if (heartbeat.compareTo(Duration.ofSeconds(5)) < 0 || heartbeat.compareTo(Duration.ofSeconds(60)) > 0) {
      throw new ConfigException("replication.heartbeat_interval", "must be between 5s and 60s");
    }
    String slot = r.string("replication.slot_name");
    if (!slot.matches("[a-z0-9_]{1,63}")) {
      throw new ConfigException("replication.slot_name", "must be 1-63 characters of a-z, 0-9 and _");
    }
    String publication = r.string("replication.publication");
    if (!publication.matches("[a-z0-9_]{1,63}")) {
      throw new ConfigException("replication.publication", "must be 1-63 characters of a-z, 0-9 and _");
    }
    return new ReplicationConfig(r.bool("replication.follower"), slot, publication, heartbeat,
        r.duration("replication.status_interval"), positive(r, "replication.progress_timeout"));
  }

  private static QueueLimits queue(ConfigReader r, String prefix) {
    return new QueueLimits(
        r.integer(prefix + ".concurrency", 1, 1_000_000),
        r.integer(prefix + ".max_queue_depth", 0, 1_000_000));
  }

  private static DatabaseConfig database(ConfigReader r, String prefix) {
    String typeKey = prefix + ".type";
    DatabaseType type = switch (r.string(typeKey).toLowerCase(Locale.ROOT)) {
      case "embedded" -> DatabaseType.EMBEDDED;
      case "postgresql", "postgres" -> DatabaseType.POSTGRESQL;
      case "mongodb" -> DatabaseType.MONGODB;
      default -> throw new ConfigException(typeKey, "must be one of embedded, postgresql, mongodb");
    };
    String uri = r.string(prefix + ".uri");
    if (type != DatabaseType.EMBEDDED && uri.isBlank()) {
      throw new ConfigException(prefix + ".uri", "required when " + typeKey + " is " + type.name().toLowerCase(Locale.ROOT));
    }
    if (type == DatabaseType.MONGODB) {
      throw new ConfigException(typeKey, "mongodb is not supported by this build yet");
    }
    return new DatabaseConfig(type, uri, r.integer(prefix + ".pool_size", 1, 256),
        positive(r, prefix + ".connect_timeout"), positive(r, prefix + ".statement_timeout"));
  }
}
