package io.ackpoint.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConfigLoaderTest {

  private static final String KEYS = "{\"keys\":[{\"kty\":\"oct\",\"kid\":\"k\",\"k\":\"c2VjcmV0\"}]}";

  /** The environment {@code env} over the minimal configuration is refused, naming each of {@code keys}. */
  private static void assertRefusedNaming(Map<String, String> env, String... keys) {
    ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(), env));
    for (String key : keys) {
      assertTrue(e.getMessage().contains(key), key + " in: " + e.getMessage());
    }
  }

  private static JsonObject minimal() {
    return new JsonObject().put("auth", new JsonObject().put("audience", "a").put("jwks", new JsonObject(KEYS)));
  }

  @Test
  void defaultsRunOnTheEmbeddedDatabaseOnLoopback8080() {
    AckpointConfig config = ConfigLoader.resolve(minimal(), Map.of());
    assertEquals("127.0.0.1", config.http().host());
    assertEquals(8080, config.http().port());
    assertTrue(config.needsEmbeddedDatabase());
    assertEquals(Path.of("data/"), config.embedded().dataDir());
    assertEquals(1, config.batching().maxInFlightBatches());
    assertEquals(List.of("a"), config.auth().audiences());
  }

  @Test
  void environmentVariablesOverrideEveryKey() {
    AckpointConfig config = ConfigLoader.resolve(minimal(), Map.of(
        "ACKPOINT_HTTP_PORT", "9191",
        "ACKPOINT_HTTP_QUEUES_CHECKPOINTING_MAX_QUEUE_DEPTH", "17",
        "ACKPOINT_BATCHING_ENABLED", "false",
        "ACKPOINT_AUTH_AUDIENCE", "x, y",
        "ACKPOINT_STORAGE_TYPE", "postgresql",
        "ACKPOINT_STORAGE_URI", "postgresql://db/ackpoint",
        "ACKPOINT_SOURCE_TYPE", "postgresql",
        "ACKPOINT_SOURCE_URI", "postgresql://app/db",
        "ACKPOINT_AUTH_CLOCK_SKEW", "5s"));
    assertEquals(9191, config.http().port());
    assertEquals(17, config.http().checkpointing().maxQueueDepth());
    assertFalse(config.batching().enabled());
    assertEquals(List.of("x", "y"), config.auth().audiences());
    assertEquals(AckpointConfig.DatabaseType.POSTGRESQL, config.storage().type());
    assertEquals("postgresql://db/ackpoint", config.storage().uri());
    assertEquals(Duration.ofSeconds(5), config.auth().clockSkew());
  }

  @Test
  void anIdleTimeoutThatWouldCloseARightlySilentResponseIsRefused() {
    assertRefusedNaming(Map.of("ACKPOINT_HTTP_IDLE_TIMEOUT", "30s"), "http.idle_timeout", "acknowledgement.legacy_timeout");
    assertRefusedNaming(Map.of("ACKPOINT_HTTP_IDLE_TIMEOUT", "60s", "ACKPOINT_STREAMS_KEEPALIVE_INTERVAL", "60s"),
        "http.idle_timeout", "streams.keepalive_interval");
    assertRefusedNaming(Map.of("ACKPOINT_HTTP_IDLE_TIMEOUT", "60s", "ACKPOINT_ACKNOWLEDGEMENT_LEGACY_TIMEOUT", "50s",
        "ACKPOINT_HTTP_QUEUES_STREAM_MAX_WAIT", "60s"), "http.idle_timeout", "http.queues.stream.max_wait");
    assertEquals(Duration.ofSeconds(120), ConfigLoader.resolve(minimal(), Map.of()).http().idleTimeout());
  }

  @Test
  void anExternalStorageWithTheEmbeddedSourceIsRefusedExplainingWhichIsWhich() {
    ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(), Map.of(
        "ACKPOINT_STORAGE_TYPE", "postgresql", "ACKPOINT_STORAGE_URI", "postgresql://db/ackpoint")));
    assertTrue(e.getMessage().contains("source.type") && e.getMessage().contains("the application's own database"), e.getMessage());
    assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(), Map.of(
        "ACKPOINT_SOURCE_TYPE", "postgresql", "ACKPOINT_SOURCE_URI", "postgresql://app/db")));
  }

  @Test
  void aBatchIntervalBeyondOneSecondOrBelowZeroIsRefusedAndZeroTurnsItOff() {
    assertRefusedNaming(Map.of("ACKPOINT_BATCHING_MIN_INTERVAL", "2s"), "batching.min_interval");
    assertRefusedNaming(Map.of("ACKPOINT_BATCHING_MIN_INTERVAL", "-1ms"), "batching.min_interval");
    assertEquals(Duration.ZERO, ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_BATCHING_MIN_INTERVAL", "0s")).batching().minInterval());
    assertEquals(Duration.ofMillis(2), ConfigLoader.resolve(minimal(), Map.of()).batching().minInterval());
  }

  @Test
  void aBatchIntervalNotBelowTheRequestTimeoutIsRefused() {
    assertRefusedNaming(Map.of("ACKPOINT_BATCHING_MIN_INTERVAL", "500ms", "ACKPOINT_BATCHING_REQUEST_TIMEOUT", "500ms"),
        "batching.min_interval", "batching.request_timeout");
    assertEquals(Duration.ofMillis(499), ConfigLoader.resolve(minimal(), Map.of(
        "ACKPOINT_BATCHING_MIN_INTERVAL", "499ms", "ACKPOINT_BATCHING_REQUEST_TIMEOUT", "500ms")).batching().minInterval());
  }

  @Test
  void aMetricsPortThatIsTheApiPortIsRefused() {
    ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(), Map.of(
        "ACKPOINT_HTTP_PORT", "9191", "ACKPOINT_METRICS_PORT", "9191")));
    assertTrue(e.getMessage().contains("metrics.port") && e.getMessage().contains("http.port"), e.getMessage());
  }

  @Test
  void keysThatAreNotAListAndAJwksUriThatIsNotAUrlAreRefusedNamingTheKey() {
    JsonObject notAList = minimal();
    notAList.getJsonObject("auth").put("jwks", new JsonObject().put("keys", "x"));
    ConfigException keys = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(notAList, Map.of()));
    assertTrue(keys.getMessage().contains("auth.jwks") && keys.getMessage().contains("list"), keys.getMessage());

    ConfigException uri = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(), Map.of(
        "ACKPOINT_AUTH_JWKS_URI", "not a uri at all")));
    assertTrue(uri.getMessage().contains("auth.jwks_uri"), uri.getMessage());
    assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_AUTH_JWKS_URI", "file:///etc/jwks.json")));
    // A Compose service name is a host, though not one java.net.URI accepts.
    assertEquals("http://auth_service:8080/jwks", ConfigLoader.resolve(minimal(), Map.of(
        "ACKPOINT_AUTH_JWKS_URI", "http://auth_service:8080/jwks")).auth().jwksUri());
  }

  @Test
  void valuesThatWouldFailOnlyOnceStartedAreRefusedNamingTheirKey(@TempDir Path directory) {
    for (Map.Entry<String, List<String>> bad : Map.of(
        "replication.status_interval", List.of("ACKPOINT_REPLICATION_STATUS_INTERVAL", "0s"),
        "streams.keepalive_interval", List.of("ACKPOINT_STREAMS_KEEPALIVE_INTERVAL", "0ms"),
        "http.host", List.of("ACKPOINT_HTTP_HOST", " "),
        "admin.token", List.of("ACKPOINT_ADMIN_TOKEN", "   ")).entrySet()) {
      ConfigException e = assertThrows(ConfigException.class,
          () -> ConfigLoader.resolve(minimal(), Map.of(bad.getValue().get(0), bad.getValue().get(1))));
      assertTrue(e.getMessage().contains("'" + bad.getKey() + "'"), bad + ": " + e.getMessage());
    }
    ConfigException unreadable = assertThrows(ConfigException.class,
        () -> ConfigLoader.loadJson(Map.of("ACKPOINT_CONFIG", directory.toString())));
    assertTrue(unreadable.getMessage().contains("cannot be read"), unreadable.getMessage());
  }

  @Test
  void aKeyGivenTwiceInTheFileIsRefusedInsteadOfTheLastOneWinning(@TempDir Path directory) throws Exception {
    Path file = directory.resolve("ackpoint.yaml");
    java.nio.file.Files.writeString(file, "http:\n  port: 9000\nauth:\n  audience: a\nhttp:\n  host: 0.0.0.0\n");
    ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.loadJson(Map.of("ACKPOINT_CONFIG", file.toString())));
    assertTrue(e.getMessage().contains("http"), e.getMessage());
  }

  @Test
  void aFileWithoutAKeyGivesEveryDefault(@TempDir Path directory) throws Exception {
    Path empty = directory.resolve("empty.yaml");
    java.nio.file.Files.writeString(empty, "");
    Path comments = directory.resolve("comments.yaml");
    java.nio.file.Files.writeString(comments, "# every key at its default\n# http:\n#   port: 9000\n");
    for (Path file : List.of(empty, comments)) {
      assertEquals(ConfigLoader.defaults(), ConfigLoader.loadJson(Map.of("ACKPOINT_CONFIG", file.toString())), file.toString());
    }
  }

  @Test
  void aMemberGivenTwiceInAVariablesJsonIsRefused() {
    ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(), Map.of(
        "ACKPOINT_AUTH_JWKS", "{\"keys\":[],\"keys\":" + new JsonObject(KEYS).getJsonArray("keys").encode() + "}")));
    assertTrue(e.getMessage().contains("auth.jwks") && e.getMessage().contains("Duplicate"), e.getMessage());
  }

  @Test
  void anEmbeddedPortThatIsTheApisIsRefused() {
    ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(), Map.of(
        "ACKPOINT_HTTP_PORT", "9191", "ACKPOINT_EMBEDDED_PORT", "9191")));
    assertTrue(e.getMessage().contains("'embedded.port'"), e.getMessage());
  }

  /** A PostgreSQL storage URI {@code uri} is refused, naming the key, with {@code words} in the reason and no password. */
  private static void assertStorageUriRefused(String uri, String words) {
    ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(), Map.of(
        "ACKPOINT_STORAGE_TYPE", "postgresql", "ACKPOINT_STORAGE_URI", uri)));
    assertTrue(e.getMessage().contains("'storage.uri'") && e.getMessage().contains(words), e.getMessage());
    assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
  }

  @Test
  void aPostgresqlUriThatCannotBeReadIsRefusedNamingTheKeyWithoutThePassword() {
    assertStorageUriRefused("postgresql://ack:s3cret@127.0.0.1:abc/app", "percent-encoded");
    assertStorageUriRefused("postgresql://ack:s3c@ret@127.0.0.1/app", "percent-encoded");
    assertStorageUriRefused("jdbc:postgresql://127.0.0.1/app?user=ack&password=s3cret", "must begin with postgresql://");
    assertStorageUriRefused("http://ack:s3cret@127.0.0.1/app", "must begin with postgresql://");
    assertStorageUriRefused("postgresql://ack:s3cret@127.0.0.1/app?sslmode=required", "sslmode must be one of");
    assertStorageUriRefused("postgresql://ack:s3cret@127.0.0.1/app?sslmode=verify-full", "needs sslrootcert");
    assertStorageUriRefused("postgresql://ack:s3cret@127.0.0.1/app?sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem",
        "not a readable file");
    assertStorageUriRefused("postgresql://ack:s3cret@127.0.0.1/app?sslmode=require&sslcert=/tmp/c.pem",
        "client certificates are not supported");
    assertStorageUriRefused("postgresql://ack:s3cret@127.0.0.1/app?ssl=true", "parameter ssl is not supported");
    assertStorageUriRefused("postgresql://ack:s3cret@127.0.0.1/app?sslmode=verify-ca&sslrootcert=system", "name the file");
    assertStorageUriRefused("postgresql://ack:s3cret@127.0.0.1/app?sslmode=verify-ca&sslrootcert=/tmp", "not a readable file");
    String good = "postgres://ack:s3cret@db.example.com:5432/app?sslmode=require&application_name=mine";
    ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_STORAGE_TYPE", "postgres", "ACKPOINT_STORAGE_URI", good,
        "ACKPOINT_SOURCE_TYPE", "postgres", "ACKPOINT_SOURCE_URI", good));
  }

  @Test
  void aBlankEmbeddedDataDirIsRefusedRatherThanTakenForTheWorkingDirectory() {
    ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(), Map.of(
        "ACKPOINT_EMBEDDED_DATA_DIR", " ")));
    assertTrue(e.getMessage().contains("'embedded.data_dir'"), e.getMessage());
    // Not used without an embedded database: not checked either.
    ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_EMBEDDED_DATA_DIR", " ",
        "ACKPOINT_SOURCE_TYPE", "postgresql", "ACKPOINT_SOURCE_URI", "postgresql://localhost/app",
        "ACKPOINT_STORAGE_TYPE", "postgresql", "ACKPOINT_STORAGE_URI", "postgresql://localhost/app"));
  }

  @Test
  void aMistypedEnvironmentVariableStopsStartupNamingItAndTheLikelyKey() {
    ConfigException e = assertThrows(ConfigException.class,
        () -> ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_HTTP_PROT", "9090")));
    assertTrue(e.getMessage().contains("ACKPOINT_HTTP_PROT"), e.getMessage());
    assertTrue(e.getMessage().contains("did you mean ACKPOINT_HTTP_PORT?"), e.getMessage());
    assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_SOMETHING_ELSE_ENTIRELY", "1")));
  }

  @Test
  void variablesThatAreNotKeysButAreAllowedPass() {
    assertEquals(9090, ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_CONFIG", "x.yaml", "ACKPOINT_HTTP_PORT", "9090",
        "PATH", "/bin")).http().port());
  }

  @Test
  void anUnknownKeyStopsStartupNamingTheKey() {
    JsonObject json = minimal().put("http", new JsonObject().put("prot", 1));
    ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(json, Map.of()));
    assertTrue(e.getMessage().contains("'http.prot'"), e.getMessage());
  }

  @Test
  void anInvalidValueStopsStartupNamingTheKey() {
    ConfigException port = assertThrows(ConfigException.class,
        () -> ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_HTTP_PORT", "eighty")));
    assertTrue(port.getMessage().contains("'http.port'") && port.getMessage().contains("must be an integer, was 'eighty'"),
        port.getMessage());
    ConfigException huge = assertThrows(ConfigException.class,
        () -> ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_HTTP_BODY_LIMIT", "99999999999999")));
    assertTrue(huge.getMessage().contains("must be an integer from -2147483648 to 2147483647, was '99999999999999'"),
        huge.getMessage());
    ConfigException range = assertThrows(ConfigException.class,
        () -> ConfigLoader.resolve(minimal().put("batching", new JsonObject().put("max_in_flight_batches", 0)), Map.of()));
    assertTrue(range.getMessage().contains("'batching.max_in_flight_batches'"), range.getMessage());
    ConfigException uri = assertThrows(ConfigException.class,
        () -> ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_SOURCE_TYPE", "postgresql")));
    assertTrue(uri.getMessage().contains("'source.uri'"), uri.getMessage());
    ConfigException type = assertThrows(ConfigException.class,
        () -> ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_SOURCE_TYPE", "oracle")));
    assertTrue(type.getMessage().contains("'source.type'"), type.getMessage());
  }

  @Test
  void mongodbIsASourceAndAStorageThatNameTheirDatabase() {
    AckpointConfig config = ConfigLoader.resolve(minimal(), Map.of(
        "ACKPOINT_SOURCE_TYPE", "mongodb", "ACKPOINT_SOURCE_URI", "mongodb://db1,db2/app?replicaSet=rs0",
        "ACKPOINT_STORAGE_TYPE", "mongodb", "ACKPOINT_STORAGE_URI", "mongodb+srv://user:pw@cluster.example.com/ackpoint"));
    assertEquals(AckpointConfig.DatabaseType.MONGODB, config.source().type());
    assertEquals(AckpointConfig.DatabaseType.MONGODB, config.storage().type());
    assertFalse(config.needsEmbeddedDatabase());
    ConfigException noDatabase = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(),
        Map.of("ACKPOINT_STORAGE_TYPE", "mongodb", "ACKPOINT_STORAGE_URI", "mongodb://db1:27017/?replicaSet=rs0")));
    assertTrue(noDatabase.getMessage().contains("'storage.uri'") && noDatabase.getMessage().contains("name the database"),
        noDatabase.getMessage());
    ConfigException notMongo = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(),
        Map.of("ACKPOINT_SOURCE_TYPE", "mongodb", "ACKPOINT_SOURCE_URI", "postgresql://db/app")));
    assertTrue(notMongo.getMessage().contains("'source.uri'"), notMongo.getMessage());
  }

  @Test
  void customCheckpointsNeedAPostgresSource() {
    ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(), Map.of(
        "ACKPOINT_CHECKPOINTS_MODE", "custom",
        "ACKPOINT_SOURCE_TYPE", "mongodb", "ACKPOINT_SOURCE_URI", "mongodb://db/app",
        "ACKPOINT_STORAGE_TYPE", "mongodb", "ACKPOINT_STORAGE_URI", "mongodb://db/app")));
    assertTrue(e.getMessage().contains("'checkpoints.mode'") && e.getMessage().contains("mongodb"), e.getMessage());
    AckpointConfig mongoStorage = ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_CHECKPOINTS_MODE", "custom",
        "ACKPOINT_SOURCE_TYPE", "postgresql", "ACKPOINT_SOURCE_URI", "postgresql://app/db",
        "ACKPOINT_STORAGE_TYPE", "mongodb", "ACKPOINT_STORAGE_URI", "mongodb://db/app"));
    assertEquals(AckpointConfig.CheckpointMode.CUSTOM, mongoStorage.checkpoints().mode());
  }

  @Test
  void keysAndAudienceAreRequired() {
    ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(new JsonObject(), Map.of()));
    assertTrue(e.getMessage().contains("'auth.audience'"), e.getMessage());
  }

  @Test
  void theFileNamedByAckpointConfigIsRead(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("other.yaml");
    Files.writeString(file, "http:\n  port: 7001\nauth:\n  audience: [z]\n  jwks: " + KEYS + "\n");
    AckpointConfig config = ConfigLoader.load(Map.of("ACKPOINT_CONFIG", file.toString()));
    assertEquals(7001, config.http().port());
    ConfigException missing = assertThrows(ConfigException.class,
        () -> ConfigLoader.load(Map.of("ACKPOINT_CONFIG", dir.resolve("nope.yaml").toString())));
    assertTrue(missing.getMessage().contains("ACKPOINT_CONFIG"));
  }

  @Test
  void theShippedConfigurationIsValid() {
    AckpointConfig config = ConfigLoader.load(Map.of("ACKPOINT_CONFIG", "conf/ackpoint.yaml"));
    assertEquals(8080, config.http().port());
  }

  /** The HS256 key of conf/ackpoint.yaml: public, since it is in the repository. */
  private static final String DEVELOPMENT_SECRET = "iJoVKTbQkCatM5bOb3GMzH-irPqiv-EwBnI_6EVtkv0";

  private static JsonObject listeningOn(String host, String kid, String secret) {
    JsonObject key = new JsonObject().put("kty", "oct").put("kid", kid).put("alg", "HS256").put("k", secret);
    return new JsonObject()
        .put("http", new JsonObject().put("host", host))
        .put("auth", new JsonObject().put("audience", "a").put("jwks", new JsonObject().put("keys", new JsonArray().add(key))));
  }

  @Test
  void thePublishedDevelopmentKeyIsTrustedOnLoopback() {
    for (String host : List.of("127.0.0.1", "127.10.20.30", "localhost", "LocalHost", "::1", "0:0:0:0:0:0:0:1")) {
      assertEquals(host, ConfigLoader.resolve(listeningOn(host, "dev", DEVELOPMENT_SECRET), Map.of()).http().host());
    }
  }

  @Test
  void thePublishedDevelopmentKeyStopsStartupOffLoopbackNamingTheKey() {
    for (String host : List.of("0.0.0.0", "::", "10.1.2.3", "128.0.0.1", "127.0.0.256", "ackpoint.example.com", "localhost.example.com")) {
      ConfigException e = assertThrows(ConfigException.class,
          () -> ConfigLoader.resolve(listeningOn(host, "dev", DEVELOPMENT_SECRET), Map.of()), host);
      assertTrue(e.getMessage().contains("'auth.jwks'"), e.getMessage());
      assertTrue(e.getMessage().contains("published development key with kid dev"), e.getMessage());
    }
    // Recognised by its key material, whatever it is called.
    ConfigException renamed = assertThrows(ConfigException.class,
        () -> ConfigLoader.resolve(listeningOn("0.0.0.0", "prod-2024", DEVELOPMENT_SECRET + "="), Map.of()));
    assertTrue(renamed.getMessage().contains("published development key with kid prod-2024"), renamed.getMessage());
    // HMAC pads a short key with zero bytes: followed by zeros, it is the same key.
    String zeroPadded = Base64.getUrlEncoder().withoutPadding().encodeToString(
        Arrays.copyOf(Base64.getUrlDecoder().decode(DEVELOPMENT_SECRET), 64));
    ConfigException padded = assertThrows(ConfigException.class,
        () -> ConfigLoader.resolve(listeningOn("0.0.0.0", "padded", zeroPadded), Map.of()));
    assertTrue(padded.getMessage().contains("published development key with kid padded"), padded.getMessage());
    // HS512's block is 128 bytes.
    String zeroPaddedForHs512 = Base64.getUrlEncoder().withoutPadding().encodeToString(
        Arrays.copyOf(Base64.getUrlDecoder().decode(DEVELOPMENT_SECRET), 128));
    assertThrows(ConfigException.class, () -> ConfigLoader.resolve(listeningOn("0.0.0.0", "padded", zeroPaddedForHs512), Map.of()));
    // The Docker image: the shipped configuration with every interface.
    ConfigException shipped = assertThrows(ConfigException.class, () -> ConfigLoader.load(
        Map.of("ACKPOINT_CONFIG", "conf/ackpoint.yaml", "ACKPOINT_HTTP_HOST", "0.0.0.0")));
    assertTrue(shipped.getMessage().contains("published development key with kid dev"), shipped.getMessage());
  }

  @Test
  void anotherKeyIsTrustedOnAnyAddress() {
    assertEquals("0.0.0.0", ConfigLoader.resolve(listeningOn("0.0.0.0", "dev", "c2VjcmV0LW5vdC1wdWJsaXNoZWQtYW55d2hlcmUtYXQtYWxs"), Map.of())
        .http().host());
    assertEquals("0.0.0.0", ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_HTTP_HOST", "0.0.0.0")).http().host());
  }

  @Test
  void remoteKeysAreRefreshedEveryFiveMinutesAndFetchedOnDemandAtMostEvery30Seconds() {
    AckpointConfig defaults = ConfigLoader.resolve(minimal(), Map.of());
    assertEquals(Duration.ofMinutes(5), defaults.auth().jwksRefreshInterval());
    assertEquals(Duration.ofSeconds(30), defaults.auth().jwksMinFetchInterval());
    assertEquals(Duration.ofSeconds(5), defaults.auth().jwksFetchTimeout());
    AckpointConfig overridden = ConfigLoader.resolve(minimal(), Map.of(
        "ACKPOINT_AUTH_JWKS_REFRESH_INTERVAL", "1h", "ACKPOINT_AUTH_JWKS_MIN_FETCH_INTERVAL", "0s"));
    assertEquals(Duration.ofHours(1), overridden.auth().jwksRefreshInterval());
    assertEquals(Duration.ZERO, overridden.auth().jwksMinFetchInterval());
    ConfigException zero = assertThrows(ConfigException.class,
        () -> ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_AUTH_JWKS_REFRESH_INTERVAL", "0s")));
    assertTrue(zero.getMessage().contains("'auth.jwks_refresh_interval'"), zero.getMessage());
  }

  @Test
  void retentionIsADurationAndTheReferenceKeysAreAccepted() {
    assertEquals(Duration.ofDays(30), ConfigLoader.resolve(minimal(), Map.of()).checkpoints().requestRetention());
    assertEquals(Duration.ofMinutes(60), ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_CHECKPOINTS_REQUEST_RETENTION", "60m"))
        .checkpoints().requestRetention());
    assertEquals(Duration.ofDays(7), ConfigLoader.resolve(minimal()
        .put("checkpoints", new JsonObject().put("checkpoint_request_retention_days", 7)), Map.of()).checkpoints().requestRetention());
    assertEquals(Duration.ofMinutes(15), ConfigLoader.resolve(minimal(),
        Map.of("ACKPOINT_CHECKPOINTS_CHECKPOINT_REQUEST_RETENTION_MINUTES", "15")).checkpoints().requestRetention());
  }

  @Test
  void aDurationLongerThanAHundredYearsStopsStartupNamingTheKey() {
    for (Map.Entry<String, String> key : Map.of(
        "ACKPOINT_SHUTDOWN_TIMEOUT", "shutdown.timeout",
        "ACKPOINT_COMPACTION_INTERVAL", "compaction.interval",
        "ACKPOINT_CHECKPOINTS_REQUEST_RETENTION", "checkpoints.request_retention",
        "ACKPOINT_CHECKPOINTS_CHECKPOINT_REQUEST_RETENTION_DAYS", "checkpoints.checkpoint_request_retention_days").entrySet()) {
      String value = key.getKey().endsWith("_DAYS") ? "36501" : "36501d";
      ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(), Map.of(key.getKey(), value)));
      assertTrue(e.getMessage().contains("'" + key.getValue() + "'") && e.getMessage().contains("longer than 36500d"), e.getMessage());
    }
    assertEquals(Duration.ofDays(36_500), ConfigLoader.resolve(minimal(), Map.of("ACKPOINT_CHECKPOINTS_REQUEST_RETENTION", "36500d"))
        .checkpoints().requestRetention());
  }

  @Test
  void aTimeoutLongerThanAnIntOfMillisecondsStopsStartupNamingTheKey() {
    for (String key : List.of("storage.statement_timeout", "source.connect_timeout", "http.idle_timeout",
        "replication.status_interval", "auth.jwks_fetch_timeout")) {
      String variable = "ACKPOINT_" + key.toUpperCase(java.util.Locale.ROOT).replace('.', '_');
      ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(), Map.of(variable, "25d")));
      assertTrue(e.getMessage().contains("'" + key + "'") && e.getMessage().contains("at most 24d"), e.getMessage());
    }
  }

  @Test
  void zeroOrNegativeRetentionStopsStartup() {
    for (Map<String, String> env : List.of(
        Map.of("ACKPOINT_CHECKPOINTS_REQUEST_RETENTION", "0s"),
        Map.of("ACKPOINT_CHECKPOINTS_CHECKPOINT_REQUEST_RETENTION_DAYS", "0"),
        Map.of("ACKPOINT_CHECKPOINTS_CHECKPOINT_REQUEST_RETENTION_MINUTES", "-5"))) {
      ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.resolve(minimal(), env));
      assertTrue(e.getMessage().contains("retention"), e.getMessage());
    }
  }

  @Test
  void fileValuesMayReferToEnvironmentVariablesWithDefaults(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("ackpoint.yaml");
    Files.writeString(file, """
        auth:
          audience: [a]
          jwks: {"keys": [{"kty": "oct", "kid": "k", "k": "c2VjcmV0"}]}
        source: {type: postgresql, uri: "${APP_DB}"}
        storage: {type: postgresql, uri: "${CHECKPOINT_DB:-postgresql://localhost/checkpoints}"}
        admin: {token: "$${NOT_A_REFERENCE}"}
        """);
    AckpointConfig config = ConfigLoader.load(Map.of("ACKPOINT_CONFIG", file.toString(), "APP_DB", "postgresql://app/db"));
    assertEquals("postgresql://app/db", config.source().uri());
    assertEquals("postgresql://localhost/checkpoints", config.storage().uri());
    assertEquals("${NOT_A_REFERENCE}", config.adminToken());
    ConfigException missing = assertThrows(ConfigException.class, () -> ConfigLoader.load(Map.of("ACKPOINT_CONFIG", file.toString())));
    assertTrue(missing.getMessage().contains("'source.uri'") && missing.getMessage().contains("APP_DB"), missing.getMessage());
  }
}
