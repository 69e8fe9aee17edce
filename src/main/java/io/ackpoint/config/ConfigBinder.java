package io.ackpoint.config;

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
import io.ackpoint.config.AckpointConfig.LogConfig;
import io.ackpoint.config.AckpointConfig.LogFormat;
import io.ackpoint.config.AckpointConfig.QueueLimits;
import io.ackpoint.config.AckpointConfig.ReplicationConfig;
import io.vertx.core.json.JsonArray;

import java.net.MalformedURLException;
import java.net.URL;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** Turns a merged configuration tree into the typed {@link AckpointConfig}; every error names its key. */
final class ConfigBinder {

  private ConfigBinder() {
  }

  static AckpointConfig bind(ConfigReader r) {
    HttpConfig http = new HttpConfig(
        r.bool("http.enabled"),
        r.string("http.host"),
        r.integer("http.port", 0, 65535),
        r.integer("http.instances", 0, 1024),
        r.integer("http.event_loops", 0, 1024),
        r.integer("http.body_limit", 64, 64 * 1024 * 1024),
        r.stringList("http.cors.allowed_origins"),
        queue(r, "http.queues.checkpointing"),
        queue(r, "http.queues.stream"),
        queue(r, "http.queues.api"),
        timeout(r, "http.idle_timeout"),
        r.integer("http.max_connections", 0, Integer.MAX_VALUE));
    if (http.host().isBlank()) {
      throw new ConfigException("http.host", "must not be empty: an address of this machine, 127.0.0.1 or 0.0.0.0");
    }
    AuthConfig auth = new AuthConfig(
        r.stringList("auth.audience"),
        r.object("auth.jwks"),
        r.string("auth.jwks_uri"),
        positive(r, "auth.jwks_refresh_interval"),
        r.duration("auth.jwks_min_fetch_interval"),
        timeout(r, "auth.jwks_fetch_timeout"),
        r.duration("auth.clock_skew"),
        positive(r, "auth.max_token_lifetime"));
    if (auth.audiences().isEmpty()) {
      throw new ConfigException("auth.audience", "at least one audience is required");
    }
    Object keys = auth.jwks().getValue("keys");
    if (keys != null && !(keys instanceof JsonArray)) {
      throw new ConfigException("auth.jwks", "keys must be a list of JWKs (a JWKS document: {\"keys\": [...]})");
    }
    if (!auth.jwksUri().isBlank() && !isHttpUrl(auth.jwksUri())) {
      throw new ConfigException("auth.jwks_uri", "must be an http or https URL, like https://idp.example.com/.well-known/jwks.json");
    }
    if ((keys == null || ((JsonArray) keys).isEmpty()) && auth.jwksUri().isBlank()) {
      throw new ConfigException("auth.jwks", "no keys: set auth.jwks or auth.jwks_uri");
    }
    Optional<String> developmentKid = DevelopmentKey.kidIn(auth.jwks());
    if (developmentKid.isPresent() && !DevelopmentKey.isLoopback(http.host())) {
      throw new ConfigException("auth.jwks", "holds the published development key with kid " + developmentKid.get()
          + " (anyone can sign tokens with it, it is in Ackpoint's repository); it is trusted only while http.host is"
          + " a loopback address (127.x.x.x, ::1, localhost), and http.host is " + http.host()
          + ": configure your own keys in auth.jwks or auth.jwks_uri");
    }
    DatabaseConfig source = database(r, "source");
    DatabaseConfig storage = database(r, "storage");
    if ((source.type() == DatabaseType.EMBEDDED) != (storage.type() == DatabaseType.EMBEDDED)) {
      throw new ConfigException("source.type", "is " + name(source.type()) + " while storage.type is " + name(storage.type())
          + ": the source is the application's own database, whose replication Ackpoint follows (set source.type and"
          + " source.uri to it); storage is where Ackpoint keeps its checkpoints (the same database or another one)."
          + " The embedded database is for trying Ackpoint out, as source and storage together");
    }
    AcknowledgementConfig acknowledgement = new AcknowledgementConfig(
        r.duration("acknowledgement.legacy_timeout"),
        r.duration("acknowledgement.max_wait"),
        positive(r, "streams.keepalive_interval"));
    requireIdleTimeoutLongerThanSilentResponses(r, http, acknowledgement);
    CheckpointsConfig checkpoints = checkpoints(r);
    if (checkpoints.mode() == CheckpointMode.CUSTOM && source.type() == DatabaseType.MONGODB) {
      throw new ConfigException("checkpoints.mode", "custom checkpoints are read from a PostgreSQL table's logical"
          + " replication, and source.type is mongodb: use checkpoints.mode managed with a MongoDB source");
    }
    int metricsPort = r.integer("metrics.port", 0, 65535);
    int embeddedPort = r.integer("embedded.port", 0, 65535);
    boolean embedded = source.type() == DatabaseType.EMBEDDED || storage.type() == DatabaseType.EMBEDDED;
    if (embeddedPort != 0 && embedded && (embeddedPort == http.port() || embeddedPort == metricsPort)) {
      throw new ConfigException("embedded.port", "is " + (embeddedPort == http.port() ? "http.port" : "metrics.port") + " ("
          + embeddedPort + "): the embedded PostgreSQL needs a port of its own, or 0 for a free one");
    }
    if (metricsPort != 0 && metricsPort == http.port() && http.enabled()) {
      // Vert.x would share the port between the two servers, and answer every other request with the other.
      throw new ConfigException("metrics.port", "is http.port (" + metricsPort + "): give the metrics server a port of its"
          + " own, or 0 to serve /metrics on the API's port");
    }
    return new AckpointConfig(
        http,
        auth,
        source,
        storage,
        new EmbeddedConfig(dataDir(r, embedded), embeddedPort),
        batching(r),
        replication(r),
        acknowledgement,
        checkpoints,
        new CompactionConfig(positive(r, "compaction.interval"), r.integer("compaction.batch_size", 1, 100_000)),
        adminToken(r),
        eventBusPrefix(r),
        positive(r, "shutdown.timeout"),
        log(r),
        metricsPort,
        ClusterBinder.bind(r, source.type() == DatabaseType.EMBEDDED || storage.type() == DatabaseType.EMBEDDED));
  }

  private static LogConfig log(ConfigReader r) {
    String level = r.string("log.level").toLowerCase(Locale.ROOT);
    if (!level.matches("error|warn|info|debug|trace")) {
      throw new ConfigException("log.level", "must be one of error, warn, info, debug, trace");
    }
    LogFormat format = switch (r.string("log.format").toLowerCase(Locale.ROOT)) {
      case "text" -> LogFormat.TEXT;
      case "json" -> LogFormat.JSON;
      default -> throw new ConfigException("log.format", "must be text or json");
    };
    return new LogConfig(level, format, r.bool("log.access"));
  }

  /** As the HTTP client reads it (java.net.URL): a host such as auth_service, a Compose service name, is one. */
  private static boolean isHttpUrl(String uri) {
    try {
      URL parsed = new URL(uri);
      return parsed.getProtocol().matches("(?i)https?") && !parsed.getHost().isEmpty() && parsed.getPort() <= 65535;
    } catch (MalformedURLException e) {
      return false;
    }
  }

  private static String name(DatabaseType type) {
    return type.name().toLowerCase(Locale.ROOT);
  }

  /** Empty turns the admin routes off; a token of spaces alone would turn them on for no caller. */
  private static String adminToken(ConfigReader r) {
    String token = r.string("admin.token");
    if (!token.isEmpty() && token.isBlank()) {
      throw new ConfigException("admin.token", "is blank: set a secret, or leave it empty to turn the admin routes off");
    }
    return token;
  }

  private static String eventBusPrefix(ConfigReader r) {
    String prefix = r.string("eventbus.prefix");
    if (!prefix.matches("[A-Za-z0-9_.-]{1,100}")) {
      throw new ConfigException("eventbus.prefix", "must be 1 to 100 letters, digits, '_', '.' or '-'");
    }
    return prefix;
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
      retention = Durations.atMostLongest(days != null ? "checkpoints.checkpoint_request_retention_days"
          : "checkpoints.checkpoint_request_retention_minutes",
          Duration.ofDays(days == null ? 0 : days).plusMinutes(minutes == null ? 0 : minutes));
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

  /**
   * A response may stay silent as long as a legacy wait, an awaited checkpoint request, the gap
   * between two stream keepalives or a request's wait for a slot of its group: the idle timeout
   * must not close such a connection.
   */
  private static void requireIdleTimeoutLongerThanSilentResponses(ConfigReader r, HttpConfig http, AcknowledgementConfig ack) {
    List<Map.Entry<String, Duration>> silences = List.of(
        Map.entry("acknowledgement.legacy_timeout", ack.legacyTimeout()),
        Map.entry("acknowledgement.max_wait", ack.maxWait()),
        Map.entry("streams.keepalive_interval", ack.keepaliveInterval()),
        Map.entry("http.queues.checkpointing.max_wait", http.checkpointing().maxWait()),
        Map.entry("http.queues.stream.max_wait", http.stream().maxWait()),
        Map.entry("http.queues.api.max_wait", http.api().maxWait()));
    for (Map.Entry<String, Duration> silence : silences) {
      if (http.idleTimeout().compareTo(silence.getValue()) <= 0) {
        throw new ConfigException("http.idle_timeout", "is " + r.string("http.idle_timeout") + ", not longer than "
            + silence.getKey() + " (" + r.string(silence.getKey()) + "): a connection would be closed while its"
            + " response is rightly silent");
      }
    }
  }

  /** PostgreSQL (statement_timeout), Vert.x and the drivers keep these in an int of milliseconds: about 24 days. */
  private static final Duration LONGEST_TIMEOUT = Duration.ofMillis(Integer.MAX_VALUE);

  private static Duration timeout(ConfigReader r, String key) {
    Duration d = positive(r, key);
    if (d.compareTo(LONGEST_TIMEOUT) > 0) {
      throw new ConfigException(key, "must be at most 24d (2^31-1 ms, the longest that PostgreSQL, Vert.x and the"
          + " database drivers take)");
    }
    return d;
  }

  private static Duration positive(ConfigReader r, String key) {
    Duration d = r.duration(key);
    if (d.isZero() || d.isNegative()) {
      throw new ConfigException(key, "must be greater than zero");
    }
    return d;
  }

  /**
   * The batching settings. {@code min_interval} is a wait added to requests under load: from zero
   * to a second, and below the request timeout, which the wait counts against.
   */
  private static BatchingConfig batching(ConfigReader r) {
    Duration requestTimeout = positive(r, "batching.request_timeout");
    Duration minInterval = atMostOneSecond(r, "batching.min_interval");
    if (minInterval.compareTo(requestTimeout) >= 0) {
      // A request that comes just after a coalesced batch waits up to min_interval in the batcher,
      // which fails every request older than request_timeout when the batch starts.
      throw new ConfigException("batching.min_interval", "is " + minInterval.toMillis() + "ms, not below batching.request_timeout ("
          + requestTimeout.toMillis() + "ms): requests waiting for the next batch would time out");
    }
    return new BatchingConfig(r.bool("batching.enabled"), r.integer("batching.max_in_flight_batches", 1, 64),
        r.integer("batching.max_pending", 1, 10_000_000), requestTimeout, minInterval);
  }

  private static Duration atMostOneSecond(ConfigReader r, String key) {
    Duration d = r.duration(key);
    if (d.isNegative() || d.compareTo(Duration.ofSeconds(1)) > 0) {
      throw new ConfigException(key, "must be from 0s (none) to 1s");
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
        timeout(r, "replication.status_interval"), positive(r, "replication.progress_timeout"));
  }

  private static QueueLimits queue(ConfigReader r, String prefix) {
    return new QueueLimits(
        r.integer(prefix + ".concurrency", 1, 1_000_000),
        r.integer(prefix + ".max_queue_depth", 0, 1_000_000),
        positive(r, prefix + ".max_wait"));
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
    if (type != DatabaseType.EMBEDDED) {
      String problem = type == DatabaseType.MONGODB ? MongoUri.problem(uri) : PgUri.problem(uri);
      if (problem != null) {
        throw new ConfigException(prefix + ".uri", problem);
      }
    }
    return new DatabaseConfig(type, uri, r.integer(prefix + ".pool_size", 1, 256),
        timeout(r, prefix + ".connect_timeout"), timeout(r, prefix + ".statement_timeout"));
  }

  /**
   * A blank one would be the working directory, where initdb would write the server's files among
   * whatever is there; without an embedded database it is not used.
   */
  private static Path dataDir(ConfigReader r, boolean embedded) {
    String dir = r.string("embedded.data_dir");
    if (dir.isBlank() && embedded) {
      throw new ConfigException("embedded.data_dir", "must name a directory (the default is data)");
    }
    return Path.of(dir);
  }
}
