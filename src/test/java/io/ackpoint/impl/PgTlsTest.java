package io.ackpoint.impl;

import io.ackpoint.support.ApiClient;
import io.ackpoint.support.LogCapture;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.SelfSignedCertificate;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import io.vertx.sqlclient.Row;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A database URI's {@code sslmode} holds for every connection Ackpoint makes with it, the pools'
 * and the replication connection's, as libpq reads it. The server speaks TLS with a self-signed
 * certificate for localhost, and accepts plain connections too, so that only {@code pg_stat_ssl}
 * can tell whether a connection is encrypted.
 */
@ExtendWith(VertxExtension.class)
class PgTlsTest {

  private static EmbeddedPostgres server;
  private static Path certificate;

  @BeforeAll
  static void startAServerThatSpeaksTls(@TempDir Path dir) throws IOException {
    SelfSignedCertificate self = SelfSignedCertificate.create("localhost");
    certificate = Files.copy(Path.of(self.certificatePath()), dir.resolve("server.crt"));
    Path key = Files.copy(Path.of(self.privateKeyPath()), dir.resolve("server.key"));
    // PostgreSQL refuses a key that others can read.
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
    server = EmbeddedPostgres.builder()
        .setDataDirectory(dir.resolve("data"))
        .setCleanDataDirectory(true)
        .setServerConfig("wal_level", "logical")
        .setServerConfig("synchronous_commit", "on")
        .setServerConfig("ssl", "on")
        .setServerConfig("ssl_cert_file", certificate.toString())
        .setServerConfig("ssl_key_file", key.toString())
        .start();
  }

  @AfterAll
  static void stopTheServer() throws IOException {
    server.close();
  }

  private static String plainUri() {
    return "postgresql://postgres@localhost:" + server.getPort() + "/postgres";
  }

  private static JsonObject on(JsonObject config, String uri) {
    config.getJsonObject("source").put("uri", uri);
    config.getJsonObject("storage").put("uri", uri);
    return config;
  }

  /** Whether each of Ackpoint's sessions on the server is encrypted, by application name. */
  private static Map<String, Boolean> encryptedSessions(Sql sql) {
    Map<String, Boolean> sessions = new HashMap<>();
    for (Row row : sql.query("SELECT a.application_name, s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)"
        + " WHERE a.application_name LIKE 'ackpoint%'")) {
      sessions.merge(row.getString(0), row.getBoolean(1), Boolean::logicalAnd);
    }
    return sessions;
  }

  private static void acknowledgedOver(RunningAckpoint app, Vertx vertx) {
    String token = TestKeys.token(vertx, "tls");
    JsonObject answer = ApiClient.data(app.api.checkpointRequestAwaiting(token, "{\"client_id\":\"c\",\"checkpoint_request_id\":\"1\"}", 30));
    assertEquals(true, answer.getBoolean("acknowledged"), answer.encode());
  }

  @Test
  void withSslModeRequireThePoolsAndTheReplicationConnectionAreEncrypted(Vertx vertx) {
    String uri = plainUri() + "?sslmode=require";
    try (RunningAckpoint app = RunningAckpoint.on(vertx, plainUri(), c -> on(TestAckpoint.withFollower(c), uri))) {
      acknowledgedOver(app, vertx);
      Map<String, Boolean> sessions = encryptedSessions(app.sql);
      assertEquals(Map.of("ackpoint", true, "ackpoint-follower", true), sessions);
    }
  }

  @Test
  void withSslModePreferThePoolsAreEncryptedWhereTheServerCanBe(Vertx vertx) {
    String uri = plainUri() + "?sslmode=prefer";
    try (RunningAckpoint app = RunningAckpoint.on(vertx, plainUri(), c -> on(TestAckpoint.withFollower(c), uri))) {
      acknowledgedOver(app, vertx);
      assertEquals(Map.of("ackpoint", true, "ackpoint-follower", true), encryptedSessions(app.sql));
    }
  }

  /** As before Ackpoint read sslmode: the Vert.x client's default for the pools, PgJDBC's (prefer) for replication. */
  @Test
  void withoutSslModeThePoolsAreNotEncryptedAndReplicationPrefersTls(Vertx vertx) {
    try (RunningAckpoint app = RunningAckpoint.on(vertx, plainUri(), TestAckpoint::withFollower)) {
      acknowledgedOver(app, vertx);
      assertEquals(Map.of("ackpoint", false, "ackpoint-follower", true), encryptedSessions(app.sql));
    }
  }

  /**
   * libpq checks the server's certificate in require when it is given the authorities; PgJDBC,
   * given the same, did not, and the replication connection followed a server no authority vouched
   * for while the pools refused it.
   */
  @Test
  void withRequireAndAnotherAuthorityTheReplicationConnectionIsRefusedToo(Vertx vertx, @TempDir Path dir) throws Exception {
    Path stranger = Files.copy(Path.of(SelfSignedCertificate.create("localhost").certificatePath()), dir.resolve("other.crt"));
    String source = plainUri() + "?sslmode=require&sslrootcert=" + stranger;
    try (LogCapture follower = LogCapture.of("io.ackpoint.source.FollowerStatus");
         RunningAckpoint app = RunningAckpoint.on(vertx, plainUri(), c -> {
           TestAckpoint.withFollower(c).getJsonObject("source").put("uri", source);
           return c;
         })) {
      String refused = follower.awaitMessage("WARN", Duration.ofSeconds(30));
      assertTrue(refused.contains("replication follower not running"), refused);
      assertTrue(encryptedSessions(app.sql).get("ackpoint-follower") == null, "the follower connected: " + refused);
    }
  }

  @Test
  void withVerifyFullTheServerIsCheckedAgainstTheGivenAuthority(Vertx vertx) {
    String uri = plainUri() + "?sslmode=verify-full&sslrootcert=" + certificate;
    try (RunningAckpoint app = RunningAckpoint.on(vertx, plainUri(), c -> on(TestAckpoint.withFollower(c), uri))) {
      acknowledgedOver(app, vertx);
      assertEquals(Map.of("ackpoint", true, "ackpoint-follower", true), encryptedSessions(app.sql));
    }
  }

  @Test
  void withVerifyCaAServerSignedByAnotherAuthorityIsRefused(Vertx vertx, VertxTestContext test, @TempDir Path dir)
      throws IOException {
    Path stranger = Files.copy(Path.of(SelfSignedCertificate.create("localhost").certificatePath()), dir.resolve("other.crt"));
    String uri = plainUri() + "?sslmode=verify-ca&sslrootcert=" + stranger;
    JsonObject config = on(TestAckpoint.configJson(plainUri()), uri);
    TestAckpoint.start(vertx, config).onComplete(test.failing(failure -> test.verify(() -> {
      assertTrue(failure.getMessage().contains("(storage.uri) could not be prepared"), failure.getMessage());
      test.completeNow();
    })));
  }
}
