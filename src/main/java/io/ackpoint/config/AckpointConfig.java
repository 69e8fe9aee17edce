package io.ackpoint.config;

import io.vertx.core.json.JsonObject;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The validated configuration of one Ackpoint process. */
public record AckpointConfig(
    HttpConfig http,
    AuthConfig auth,
    DatabaseConfig source,
    DatabaseConfig storage,
    EmbeddedConfig embedded,
    BatchingConfig batching,
    ReplicationConfig replication,
    AcknowledgementConfig acknowledgement,
    CheckpointsConfig checkpoints,
    CompactionConfig compaction,
    String adminToken,
    String eventBusPrefix,
    Duration shutdownTimeout,
    LogConfig log,
    int metricsPort,
    ClusterConfig cluster) {

  public record HttpConfig(boolean enabled, String host, int port, int instances, int eventLoops, int bodyLimit,
                           List<String> corsAllowedOrigins,
                           QueueLimits checkpointing, QueueLimits stream, QueueLimits api, Duration idleTimeout,
                           int maxConnections) {

  }

  /**
   * At most {@code concurrency} requests of a route group run; at most {@code maxQueueDepth} wait,
   * each for at most {@code maxWait}.
   */
  public record QueueLimits(int concurrency, int maxQueueDepth, Duration maxWait) {
  }

  /**
   * Trusted keys are the union of the inline {@code jwks} (always) and those of {@code jwksUri}, fetched
   * every {@code jwksRefreshInterval} and, for a token no known key can verify, at most every
   * {@code jwksMinFetchInterval}.
   */
  public record AuthConfig(List<String> audiences, JsonObject jwks, String jwksUri, Duration jwksRefreshInterval,
                           Duration jwksMinFetchInterval, Duration jwksFetchTimeout, Duration clockSkew,
                           Duration maxTokenLifetime) {
  }

  public enum DatabaseType { EMBEDDED, POSTGRESQL, MONGODB }

  /**
   * How one database is reached. {@code statementTimeout} bounds every statement on the server;
   * {@code connectTimeout} bounds opening a connection, so a database that is down fails requests
   * quickly (503) instead of queueing them.
   */
  public record DatabaseConfig(DatabaseType type, String uri, int poolSize, Duration connectTimeout,
                               Duration statementTimeout) {

    DatabaseConfig withEmbeddedUri(String embeddedUri) {
      return type == DatabaseType.EMBEDDED
          ? new DatabaseConfig(type, embeddedUri, poolSize, connectTimeout, statementTimeout) : this;
    }
  }

  public record EmbeddedConfig(Path dataDir, int port) {
  }

  /**
   * How replication progress is followed. Without the built-in follower, {@code progressTimeout} is
   * how long Ackpoint stays ready without hearing of progress from another verticle.
   */
  public record ReplicationConfig(boolean follower, String slotName, String publication,
                                  Duration heartbeatInterval, Duration statusInterval, Duration progressTimeout) {
  }

  /** Bounds of the waits on acknowledgements, and the stream keepalive. */
  public record AcknowledgementConfig(Duration legacyTimeout, Duration maxWait, Duration keepaliveInterval) {
  }

  public enum CheckpointMode { MANAGED, CUSTOM }

  /**
   * Where custom checkpoints come from: a source table the application writes its own ids into.
   * Every name is an exact, case-sensitive PostgreSQL name ({@code Checkpoints} is not
   * {@code checkpoints}); {@code table} may be qualified by a schema ({@code app.Checkpoints}),
   * else it is in {@code public}. {@code clientColumn} and {@code requestColumn} may be null.
   * {@code storeTimeout} bounds how long the follower waits for storage to make the rows of one
   * transaction durable before it restarts the stream, which then sends them again.
   */
  public record CustomTable(String table, String userColumn, String checkpointColumn, String clientColumn,
                            String requestColumn, Duration storeTimeout) {

    public String schemaName() {
      int dot = table.indexOf('.');
      return dot < 0 ? "public" : table.substring(0, dot);
    }

    public String tableName() {
      return table.substring(table.indexOf('.') + 1);
    }

    /** Configuration key → configured column, for every column a custom checkpoint is read from. */
    public Map<String, String> columnsByKey() {
      Map<String, String> columns = new LinkedHashMap<>();
      columns.put("custom.user_column", userColumn);
      columns.put("custom.checkpoint_column", checkpointColumn);
      if (clientColumn != null) {
        columns.put("custom.client_column", clientColumn);
      }
      if (requestColumn != null) {
        columns.put("custom.request_column", requestColumn);
      }
      return columns;
    }
  }

  public record CheckpointsConfig(CheckpointMode mode, Duration requestRetention, CustomTable custom) {
  }

  public enum LogFormat { TEXT, JSON }

  /** The runnable service's logging: a level, text or JSON lines, and whether each request is logged. */
  public record LogConfig(String level, LogFormat format, boolean access) {
  }

  public record CompactionConfig(Duration interval, int batchSize) {
  }

  /**
   * {@code enabled = false} makes every request its own batch. At most {@code maxPending} requests
   * wait for a batch; a request is given up after {@code requestTimeout}, and so is a batch. After a
   * batch that wrote at most one row per two requests, the next one starts {@code minInterval} after
   * it at the soonest.
   */
  public record BatchingConfig(boolean enabled, int maxInFlightBatches, int maxPending, Duration requestTimeout,
                               Duration minInterval) {
  }

  /**
   * Cluster mode ({@code cluster.*}): this node binds {@code host} ({@code port} for Hazelcast,
   * {@code eventBusPort} for the event bus, 0 for a free one) and the others reach it at
   * {@code publicHost} (null: at {@code host}). It joins the seeds of {@code members} (host:port), or
   * the pods behind {@code kubernetesServiceDns} when that is not null. A node silent for
   * {@code failoverTimeout} is removed from the cluster.
   */
  public record ClusterConfig(boolean enabled, String host, int port, int eventBusPort, String publicHost,
                              List<String> members, String kubernetesServiceDns, Duration failoverTimeout) {

    /** The address the other nodes reach this one at. */
    public String advertisedHost() {
      return publicHost != null ? publicHost : host;
    }

    /** Whether this node binds every address of its machine, so that no one of them is its own. */
    public boolean bindsAll() {
      return host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
    }
  }

  /** This configuration with the embedded database's URI filled in wherever the embedded one is used. */
  public AckpointConfig withEmbeddedUri(String uri) {
    return new AckpointConfig(http, auth, source.withEmbeddedUri(uri), storage.withEmbeddedUri(uri), embedded, batching,
        replication, acknowledgement, checkpoints, compaction, adminToken, eventBusPrefix, shutdownTimeout, log, metricsPort,
        cluster);
  }

  /** True when either side runs on the embedded PostgreSQL, which must then be started first. */
  public boolean needsEmbeddedDatabase() {
    return source.type() == DatabaseType.EMBEDDED || storage.type() == DatabaseType.EMBEDDED;
  }
}
