package io.ackpoint;

import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.ackpoint.support.ApiClient.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The embedded default keeps its data in embedded.data_dir: a restarted Ackpoint continues every sequence. */
@ExtendWith(VertxExtension.class)
class EmbeddedRestartTest {

  @Test
  void checkpointsSurviveARestartOnTheSameDataDirectory(Vertx vertx, @TempDir Path dataDir) {
    JsonObject json = embedded(dataDir);
    String token = TestKeys.token(vertx, "restart");

    assertEquals("1", generatedIdOfAStart(vertx, json, token));
    assertEquals("2", generatedIdOfAStart(vertx, json, token));
  }

  /** Closed once Ackpoint has started, or while deploy still starts the embedded database. */
  @ParameterizedTest(name = "while starting: {0}")
  @ValueSource(booleans = {false, true})
  void closingTheVertxWithoutClosingAckpointStopsTheEmbeddedDatabase(boolean whileStarting, Vertx vertx, @TempDir Path dataDir) {
    JsonObject json = embedded(dataDir);
    String token = TestKeys.token(vertx, "vertx-closed");
    Vertx own = Vertx.vertx();
    Future<Ackpoint> started = TestAckpoint.start(own, json);
    if (!whileStarting) {
      Await.result(started);
    }
    Await.result(own.close());
    assertTrue(started.isComplete(), "the deploy has ended once the Vert.x is closed");
    assertFalse(Files.exists(dataDir.resolve("postmaster.pid")), "the embedded PostgreSQL stopped with the Vert.x");
    assertEquals("1", generatedIdOfAStart(vertx, json, token));
  }

  @Test
  void closeFailsWhenTheEmbeddedDatabaseDoesNotStop(Vertx vertx, @TempDir Path dataDir) throws Exception {
    JsonObject json = embedded(dataDir);
    String token = TestKeys.token(vertx, "did-not-stop");
    Ackpoint ackpoint = Await.result(TestAckpoint.start(vertx, json));
    long pid = Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
    ProcessHandle postmaster = ProcessHandle.of(pid).orElseThrow();
    // A frozen postmaster: its backends still serve Ackpoint's connections, but it never handles the stop request.
    signal("STOP", pid);
    Throwable failed;
    try {
      failed = failure(ackpoint.close());
    } finally {
      signal("CONT", pid);
    }
    assertTrue(failed != null && failed.getMessage().contains("did not stop"), String.valueOf(failed));
    // Thawed, it handles the stop request it was sent.
    postmaster.onExit().get(60, TimeUnit.SECONDS);
    assertEquals("1", generatedIdOfAStart(vertx, json, token));
  }

  /**
   * The server's processes keep the output pg_ctl gave them for as long as they run: were it a pipe
   * to this process, a thread would read it for as long, and the JDK's thread that waits for pg_ctl
   * to end would wait behind that one (waking every second).
   */
  @Test
  void theEmbeddedServerSharesNoPipeWithAckpoint(Vertx vertx, @TempDir Path dataDir) throws IOException {
    Ackpoint ackpoint = Await.result(TestAckpoint.start(vertx, embedded(dataDir)));
    try {
      long pid = Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
      ProcessHandle postmaster = ProcessHandle.of(pid).orElseThrow();
      Set<String> ours = pipes(ProcessHandle.current().pid());
      for (ProcessHandle server : Stream.concat(Stream.of(postmaster), postmaster.children()).toList()) {
        Set<String> shared = new HashSet<>(pipes(server.pid()));
        shared.retainAll(ours);
        assertTrue(shared.isEmpty(), "process " + server.pid() + " " + server.info().commandLine().orElse("") + ": " + shared);
      }
    } finally {
      Await.result(ackpoint.close());
    }
  }

  /** The pipes a process has open, as Linux names them ("pipe:[inode]"). */
  private static Set<String> pipes(long pid) throws IOException {
    Set<String> pipes = new HashSet<>();
    try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
      for (Path fd : fds.toList()) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith("pipe:")) {
            pipes.add(target);
          }
        } catch (IOException closedMeanwhile) {
          // not a pipe any more
        }
      }
    }
    return pipes;
  }

  private static void signal(String name, long pid) throws IOException, InterruptedException {
    assertEquals(0, new ProcessBuilder("kill", "-" + name, Long.toString(pid)).inheritIO().start().waitFor());
  }

  @Test
  void aStaleSocketLockFileOfItsPortDoesNotKeepTheEmbeddedDatabaseFromStarting(Vertx vertx, @TempDir Path dataDir)
      throws IOException {
    // What a server killed outright leaves in /tmp, naming a PID that is now another live process's.
    int port = TestAckpoint.freePort();
    Path lock = Path.of("/tmp", ".s.PGSQL." + port + ".lock");
    Files.writeString(lock, "1\n" + dataDir + "\n0\n" + port + "\n/tmp\n");
    try {
      JsonObject json = embedded(dataDir);
      json.getJsonObject("embedded").put("port", port);
      String token = TestKeys.token(vertx, "stale-lock");
      assertEquals("1", generatedIdOfAStart(vertx, json, token));
    } finally {
      Files.deleteIfExists(lock);
    }
  }

  @Test
  void anEmbeddedPortInUseIsNamedAndLeavesTheDataDirectoryUsable(Vertx vertx, @TempDir Path dataDir) throws IOException {
    JsonObject json = embedded(dataDir);
    String token = TestKeys.token(vertx, "port-in-use");
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      json.getJsonObject("embedded").put("port", taken.getLocalPort());
      Throwable refused = failure(TestAckpoint.start(vertx, json));
      assertTrue(refused.getMessage().contains("embedded.port " + taken.getLocalPort()), refused.getMessage());
    }
    json.getJsonObject("embedded").remove("port");
    assertEquals("1", generatedIdOfAStart(vertx, json, token));
  }

  @Test
  void twoDeploysAtOnceOnOneDataDirectoryStartOneAndRefuseTheOtherClearly(Vertx vertx, @TempDir Path dataDir, @TempDir Path links)
      throws IOException {
    JsonObject json = embedded(dataDir);
    // The same directory by another path, through a link: one claim.
    Path link = Files.createSymbolicLink(links.resolve("data"), dataDir);
    JsonObject second = embedded(link.resolve("sub").resolve("..")).put("eventbus", new JsonObject().put("prefix", "second"));
    Future<Ackpoint> one = TestAckpoint.start(vertx, json);
    Future<Ackpoint> other = TestAckpoint.start(vertx, second);
    Await.result(Future.join(one, other).otherwiseEmpty());
    assertTrue(one.succeeded() != other.succeeded(), "exactly one started");
    Throwable refused = one.failed() ? one.cause() : other.cause();
    assertTrue(refused.getMessage().contains("in use by this process already"), refused.getMessage());
    Await.result((one.succeeded() ? one : other).result().close());
  }

  private static JsonObject embedded(Path dataDir) {
    return TestAckpoint.configJson("unused")
        .put("source", new JsonObject().put("type", "embedded"))
        .put("storage", new JsonObject().put("type", "embedded"))
        .put("embedded", new JsonObject().put("data_dir", dataDir.toString()));
  }

  private static Throwable failure(Future<?> future) {
    return Await.result(future.<Throwable>transform(ar -> Future.succeededFuture(ar.cause())));
  }

  /**
   * The id {@code GET /write-checkpoint2.json} generates for {@code token}'s user on an Ackpoint
   * deployed for it and closed after it: deploy starts the embedded database and close stops it, so
   * each start finds what the one before it stored.
   */
  private static String generatedIdOfAStart(Vertx vertx, JsonObject json, String token) {
    Ackpoint ackpoint = Await.result(TestAckpoint.start(vertx, json));
    ApiClient api = new ApiClient(vertx, TestAckpoint.portOf(json));
    try {
      return data(api.writeCheckpoint2(token, "c1")).getString("write_checkpoint");
    } finally {
      api.close();
      Await.result(ackpoint.close());
    }
  }
}
