package io.ackpoint.fault;

import io.ackpoint.support.AckpointProcess;
import io.ackpoint.support.SilentServer;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The runnable service on its embedded default, killed with SIGKILL: its PostgreSQL outlives it, and
 * the next start recovers by itself and continues every sequence. Start-up failures are one line.
 */
class EmbeddedCrashTest {

  private static Map<String, String> env(Path dataDir, int port) {
    return Map.of("ACKPOINT_CONFIG", "conf/ackpoint.yaml", "ACKPOINT_HTTP_PORT", Integer.toString(port),
        "ACKPOINT_EMBEDDED_DATA_DIR", dataDir.toString());
  }

  private static String writeCheckpoint(AckpointProcess ackpoint, String token) throws Exception {
    var response = ackpoint.get("/write-checkpoint2.json?client_id=c", token);
    assertEquals(200, response.statusCode(), response.body());
    return new JsonObject(response.body()).getJsonObject("data").getString("write_checkpoint");
  }

  @Test
  void aRestartAfterSigkillStopsTheLeftoverDatabaseAndContinues(@TempDir Path dataDir) throws Exception {
    String token = TestKeys.handMade(new JsonObject().put("alg", "HS256").put("kid", "dev"),
        TestKeys.claims("crash").put("aud", "ackpoint"), "iJoVKTbQkCatM5bOb3GMzH-irPqiv-EwBnI_6EVtkv0");
    int port = TestAckpoint.freePort();
    AckpointProcess first = AckpointProcess.startReady(env(dataDir, port));
    assertEquals("1", writeCheckpoint(first, token));
    first.kill();
    assertTrue(Files.exists(dataDir.resolve("postmaster.pid")), "the embedded PostgreSQL outlived the killed JVM");

    try (AckpointProcess second = AckpointProcess.startReady(env(dataDir, port))) {
      assertEquals("2", writeCheckpoint(second, token));
      assertTrue(second.log().contains("left running"), second.log());
      assertEquals(0, second.stop(), "SIGTERM stops gracefully with status 0");
    }
  }

  @Test
  void aSigtermWhileStartingStopsOnceStartedWithStatus0AndStopsItsDatabase(@TempDir Path dataDir) throws Exception {
    AckpointProcess starting = AckpointProcess.start(env(dataDir, TestAckpoint.freePort()));
    starting.awaitLogLine(line -> line.contains("starting the embedded PostgreSQL"), Duration.ofSeconds(60));
    assertEquals(0, starting.stop(), starting.log());
    assertFalse(Files.exists(dataDir.resolve("postmaster.pid")), "the embedded PostgreSQL was left running: " + starting.log());
  }

  @Test
  void aStopSentToTheProcessAndThenItsGroupIsOneGracefulStop(@TempDir Path dataDir) throws Exception {
    AckpointProcess ackpoint = AckpointProcess.startReady(env(dataDir, TestAckpoint.freePort()));
    assertEquals(0, ackpoint.stopTwiceAtOnce(), ackpoint.log());
    assertFalse(Files.exists(dataDir.resolve("postmaster.pid")), "the embedded PostgreSQL was left running: " + ackpoint.log());
  }

  @Test
  void aSecondAckpointOnTheDataDirectoryOfARunningOneRefusesToStartAndLeavesItsDatabaseAlone(@TempDir Path dataDir)
      throws Exception {
    String token = TestKeys.handMade(new JsonObject().put("alg", "HS256").put("kid", "dev"),
        TestKeys.claims("twice").put("aud", "ackpoint"), "iJoVKTbQkCatM5bOb3GMzH-irPqiv-EwBnI_6EVtkv0");
    try (AckpointProcess first = AckpointProcess.startReady(env(dataDir, TestAckpoint.freePort()))) {
      assertEquals("1", writeCheckpoint(first, token));
      AckpointProcess second = AckpointProcess.start(env(dataDir, TestAckpoint.freePort()));
      assertEquals(1, second.awaitExit());
      assertTrue(second.log().contains("it is in use by another running Ackpoint"), second.log());
      assertEquals("2", writeCheckpoint(first, token), "the first one's database still runs");
      assertEquals(200, first.get("/probes/liveness").statusCode());
    }
  }

  /**
   * Nothing but a restart of Ackpoint starts its embedded PostgreSQL again: once it has died,
   * liveness says so, and an orchestrator's liveness probe restarts the service, which continues.
   */
  @Test
  void anEmbeddedDatabaseThatDiedFailsLivenessAndTheRestartContinues(@TempDir Path dataDir) throws Exception {
    String token = TestKeys.handMade(new JsonObject().put("alg", "HS256").put("kid", "dev"),
        TestKeys.claims("embedded-died").put("aud", "ackpoint"), "iJoVKTbQkCatM5bOb3GMzH-irPqiv-EwBnI_6EVtkv0");
    int port = TestAckpoint.freePort();
    try (AckpointProcess first = AckpointProcess.startReady(env(dataDir, port))) {
      assertEquals("1", writeCheckpoint(first, token));
      assertEquals(200, first.get("/probes/liveness").statusCode());
      long pid = Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
      ProcessHandle postmaster = ProcessHandle.of(pid).orElseThrow();
      postmaster.destroyForcibly();
      postmaster.onExit().get();
      // Told in the log, unasked (nobody probed yet), naming where the server's own log is (it had
      // logged its start there).
      String told = "ERROR [";
      assertNotNull(first.awaitLogLine(line -> line.contains(told) && line.contains("(pid " + pid + ") has stopped")
          && line.contains(dataDir.resolve("log").toString()), Duration.ofSeconds(30)), first.log());
      var liveness = first.get("/probes/liveness");
      assertEquals(503, liveness.statusCode(), liveness.body());
      assertTrue(liveness.body().contains("the embedded PostgreSQL has stopped"), liveness.body());
      assertEquals(1, first.log().lines().filter(line -> line.contains("has stopped")).count(), "told once: " + first.log());
      try (var files = Files.list(dataDir.resolve("log"))) {
        assertTrue(files.anyMatch(f -> f.getFileName().toString().matches("postgresql-\\w{3}\\.log")));
      }
      first.kill();
    }
    try (AckpointProcess second = AckpointProcess.startReady(env(dataDir, port))) {
      assertEquals("2", writeCheckpoint(second, token));
      assertEquals(200, second.get("/probes/liveness").statusCode());
      // pg_ctl warns that the dead server's lock file is there and starts anyway: not an error.
      assertTrue(second.log().lines().noneMatch(line -> line.contains("ERROR")), second.log());
    }
  }

  @Test
  void anUnreachableDatabaseIsOneLineAndANonZeroExit() throws Exception {
    String unreachable = "postgresql://ackpoint:secret@127.0.0.1:" + TestAckpoint.freePort() + "/nothing";
    AckpointProcess failed = AckpointProcess.start(Map.of("ACKPOINT_CONFIG", "conf/ackpoint.yaml",
        "ACKPOINT_HTTP_PORT", Integer.toString(TestAckpoint.freePort()),
        "ACKPOINT_SOURCE_TYPE", "postgresql", "ACKPOINT_SOURCE_URI", unreachable,
        "ACKPOINT_STORAGE_TYPE", "postgresql", "ACKPOINT_STORAGE_URI", unreachable));
    assertEquals(1, failed.awaitExit());
    String log = failed.log();
    assertTrue(log.contains("ackpoint: could not start: storage at postgresql://ackpoint:***@127.0.0.1:"), log);
    assertTrue(!log.contains("secret") && !log.contains("\tat "), "no password, no stack trace: " + log);
  }

  /**
   * A server that accepts connections and never answers fails the start within the storage's bounds,
   * in one line naming it: before, the migrations' unbounded connection held the start until its
   * 120 s limit, which named nothing, after an error with a stack trace from the pool.
   */
  @Test
  void aDatabaseThatNeverAnswersFailsTheStartInOneLineNamingStorage() throws Exception {
    try (SilentServer silent = SilentServer.start()) {
      String uri = silent.postgresUri();
      AckpointProcess failed = AckpointProcess.start(Map.of("ACKPOINT_CONFIG", "conf/ackpoint.yaml",
          "ACKPOINT_HTTP_PORT", Integer.toString(TestAckpoint.freePort()),
          "ACKPOINT_SOURCE_TYPE", "postgresql", "ACKPOINT_SOURCE_URI", uri,
          "ACKPOINT_STORAGE_TYPE", "postgresql", "ACKPOINT_STORAGE_URI", uri,
          "ACKPOINT_STORAGE_CONNECT_TIMEOUT", "1s", "ACKPOINT_STORAGE_STATEMENT_TIMEOUT", "1s"));
      assertEquals(1, failed.awaitExit());
      String log = failed.log();
      assertTrue(log.contains("ackpoint: could not start: storage at ") && log.contains("(storage.uri) could not be prepared"), log);
      assertTrue(!log.contains("\tat ") && !log.contains("ERROR"), "no stack trace, no error of the pool: " + log);
    }
  }

  @Test
  void argumentsAreRefusedWithTheWayToConfigureInstead() throws Exception {
    Map<String, String> env = Map.of("ACKPOINT_HTTP_PORT", Integer.toString(TestAckpoint.freePort()));
    AckpointProcess refused = AckpointProcess.start(env, List.of(), "127.0.0.1", List.of("--config=other.yaml"));
    assertEquals(2, refused.awaitExit());
    assertTrue(refused.log().startsWith("ackpoint: no arguments are taken (given: --config=other.yaml)")
        && refused.log().contains("ACKPOINT_CONFIG"), refused.log());
    AckpointProcess help = AckpointProcess.start(env, List.of(), "127.0.0.1", List.of("--help"));
    assertEquals(0, help.awaitExit());
    assertTrue(help.log().startsWith("usage: "), help.log());
  }

  /**
   * The reason a start fails is PostgreSQL's own line, which must be where an operator's alerts look
   * (error), not among the server's routine output.
   */
  @Test
  void theEmbeddedServersReasonForAFailedStartIsLoggedAtError(@TempDir Path dataDir) throws Exception {
    Files.writeString(dataDir.resolve("postgresql.conf"), "");
    Files.writeString(dataDir.resolve("PG_VERSION"), "16\n");
    Map<String, String> env = new java.util.HashMap<>(env(dataDir, TestAckpoint.freePort()));
    env.put("ACKPOINT_LOG_FORMAT", "json");
    AckpointProcess failed = AckpointProcess.start(env);
    assertEquals(1, failed.awaitExit());
    String log = failed.log();
    boolean fatalAtError = false;
    boolean detailAtError = false;
    for (String line : log.split("\n")) {
      if (line.startsWith("{")) {
        JsonObject json = new JsonObject(line);
        boolean error = "ERROR".equals(json.getString("level"));
        fatalAtError |= error && json.getString("formattedMessage", "").contains("FATAL:");
        detailAtError |= error && json.getString("formattedMessage", "").contains("initialized by PostgreSQL version 16");
      }
    }
    assertTrue(fatalAtError && detailAtError, log);
  }

  /** An operator who points embedded.data_dir at a folder of their own learns why initdb refused it. */
  @Test
  void aDataDirectoryInitdbRefusesFailsWithInitdbsReasonAndTheKey(@TempDir Path dataDir) throws Exception {
    Files.writeString(dataDir.resolve("notes.txt"), "someone's files");
    AckpointProcess failed = AckpointProcess.start(env(dataDir, TestAckpoint.freePort()));
    assertEquals(1, failed.awaitExit());
    String log = failed.log();
    assertTrue(log.lines().anyMatch(line -> line.contains("ERROR") && line.contains("initdb: error: ")
        && line.contains("exists but is not empty")), log);
    assertTrue(log.contains("(embedded.data_dir): initdb failed (its reason is logged above)"), log);
    assertTrue(Files.exists(dataDir.resolve("notes.txt")), "the folder is left as it was");
  }

  /**
   * A start that fails once the server's log collector runs (here a crash recovery without its
   * write-ahead log) says why in Ackpoint's log too: the server wrote it to its own log file only.
   */
  @Test
  void aStartThatFailsAfterTheServerLogsToItsOwnFilesStillLogsTheReasonAtError(@TempDir Path dataDir) throws Exception {
    int port = TestAckpoint.freePort();
    AckpointProcess.startReady(env(dataDir, port)).close();
    try (var segments = Files.list(dataDir.resolve("pg_wal"))) {
      for (Path segment : segments.filter(f -> f.getFileName().toString().matches("[0-9A-F]{24}")).toList()) {
        Files.delete(segment);
      }
    }
    Map<String, String> env = new java.util.HashMap<>(env(dataDir, port));
    env.put("ACKPOINT_LOG_FORMAT", "json");
    AckpointProcess failed = AckpointProcess.start(env);
    assertEquals(1, failed.awaitExit());
    String log = failed.log();
    assertTrue(log.lines().filter(line -> line.startsWith("{")).map(JsonObject::new)
        .anyMatch(json -> "ERROR".equals(json.getString("level")) && json.getString("formattedMessage", "").contains("PANIC:")), log);
  }
}
