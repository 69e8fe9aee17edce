package io.ackpoint.embedding;

import io.ackpoint.Ackpoint;
import io.ackpoint.AckpointOptions;
import io.ackpoint.config.ConfigException;
import io.ackpoint.support.Await;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static io.ackpoint.support.TestAckpoint.ADDRESSES;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** README, Embedding: what deploy and close promise an application that embeds Ackpoint. */
@ExtendWith(VertxExtension.class)
class LifecycleTest {

  @Test
  void closingAckpointEndsTheStreamsOfTheRoutesAHostMountedWhichAnswer503From(Vertx vertx) {
    int port = TestAckpoint.freePort();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    MountingHost host = new MountingHost(TestAckpoint.configJson(TestDatabase.freshDatabase()), port, registry);
    Await.result(vertx.deployVerticle(host));
    String token = TestKeys.token(vertx, "mounted");
    HttpClient http = vertx.createHttpClient();
    Promise<Void> opened = Promise.promise();
    Future<Void> streamEnded = http.request(HttpMethod.POST, port, "127.0.0.1", "/ackpoint/sync/stream")
        .compose(request -> request.putHeader("Authorization", "Token " + token).putHeader("Content-Type", "application/json")
            .send("{\"client_id\":\"c\"}"))
        .compose(stream -> {
          stream.handler(chunk -> {
            if (chunk.toString().contains("checkpoint_complete")) {
              opened.tryComplete();
            }
          });
          return stream.end();
        });
    Await.result(opened.future());

    Await.result(host.ackpoint.close());
    // Ended by Ackpoint, not by the host: its server still runs.
    Await.result(streamEnded);
    var after = Await.result(WebClient.create(vertx).get(port, "127.0.0.1", "/ackpoint/write-checkpoint2.json")
        .putHeader("Authorization", "Token " + token).send());
    assertEquals(503, after.statusCode(), after.bodyAsString());
    assertEquals("ACK_UNAVAILABLE", after.bodyAsJsonObject().getJsonObject("error").getString("code"));
    assertTrue(Await.result(host.ackpoint.createRouter().map(router -> "made").otherwise(Throwable::getMessage)).contains("closed"));
    // Answering after close registered no meter of its own.
    assertEquals(List.of(), registry.getMeters().stream().map(m -> m.getId().getName()).filter(n -> n.startsWith("ackpoint.")).toList());
  }

  @Test
  void aRouterServedFromAnotherEventLoopThanTheOneItWasMadeOnIsRefusedNamingTheFix(Vertx vertx) {
    Ackpoint ackpoint = startedWithoutHttp(vertx);
    try {
      ContextInternal made = ((VertxInternal) vertx).createEventLoopContext();
      ContextInternal serving = ((VertxInternal) vertx).createEventLoopContext();
      while (serving.nettyEventLoop() == made.nettyEventLoop()) {
        serving = ((VertxInternal) vertx).createEventLoopContext();
      }
      Router routes = Await.result(on(made, ackpoint::createRouter));
      int port = TestAckpoint.freePort();
      Await.result(on(serving, () -> vertx.createHttpServer().requestHandler(routes).listen(port, "127.0.0.1")));

      var refused = checkpoint(vertx, port, "shared-router");
      assertEquals(500, refused.statusCode(), refused.bodyAsString());
      JsonObject error = refused.bodyAsJsonObject().getJsonObject("error");
      assertEquals("ACK_INTERNAL", error.getString("code"));
      assertTrue(error.getString("description").contains("createRouter on each event loop"), error.encode());
    } finally {
      Await.result(ackpoint.close());
    }
  }

  @Test
  void aRouterMadeAndServedOnAWorkerContextAnswers(Vertx vertx) {
    Ackpoint ackpoint = startedWithoutHttp(vertx);
    try {
      ContextInternal worker = ((VertxInternal) vertx).createWorkerContext();
      int port = TestAckpoint.freePort();
      Await.result(on(worker, () -> ackpoint.createRouter()
          .compose(routes -> vertx.createHttpServer().requestHandler(routes).listen(port, "127.0.0.1"))));

      var answered = checkpoint(vertx, port, "worker-router");
      assertEquals(200, answered.statusCode(), answered.bodyAsString());
    } finally {
      Await.result(ackpoint.close());
    }
  }

  private static Ackpoint startedWithoutHttp(Vertx vertx) {
    JsonObject config = TestAckpoint.configJson(TestDatabase.freshDatabase());
    config.getJsonObject("http").put("enabled", false);
    return Await.result(TestAckpoint.start(vertx, config));
  }

  /** {@code GET /write-checkpoint2.json} of {@code user} on {@code port}. */
  private static HttpResponse<Buffer> checkpoint(Vertx vertx, int port, String user) {
    return Await.result(WebClient.create(vertx).get(port, "127.0.0.1", "/write-checkpoint2.json")
        .putHeader("Authorization", "Token " + TestKeys.token(vertx, user)).send());
  }

  /** What {@code action} answers, started on {@code context}. */
  private static <T> Future<T> on(ContextInternal context, Supplier<Future<T>> action) {
    Promise<T> answer = context.promise();
    context.runOnContext(v -> action.get().onComplete(answer));
    return answer.future();
  }

  @Test
  void twoCloseCallsAtOnceBothLetTheBatchInFlightFinish(Vertx vertx) throws Exception {
    String database = TestDatabase.freshDatabase();
    JsonObject config = TestAckpoint.configJson(database);
    config.getJsonObject("http").put("enabled", false);
    Ackpoint ackpoint = Await.result(TestAckpoint.start(vertx, config));
    try (Sql sql = new Sql(vertx, database)) {
      // A batch held in flight by a lock on storage while both calls come.
      SqlConnection blocker = Await.result(sql.pool().getConnection());
      Transaction tx = Await.result(blocker.begin());
      Await.result(blocker.query("LOCK TABLE ackpoint_write_checkpoints IN ACCESS EXCLUSIVE MODE").execute());
      Future<?> inFlight = vertx.eventBus().request(ADDRESSES.checkpointCreate(), new JsonObject().put("user_id", "in-flight"));
      awaitLockWaiter(vertx, sql);

      Future<Void> first = ackpoint.close();
      Future<Void> second = ackpoint.close();
      Await.result(tx.rollback());
      blocker.close();

      Await.result(inFlight);
      Await.result(first);
      Await.result(second);
      assertEquals(1, sql.checkpointRows());
    }
  }

  @Test
  void aSecondAckpointWithTheSamePrefixOnOneVertxIsRefusedAndTheFirstKeepsWorking(Vertx vertx) {
    JsonObject config = TestAckpoint.configJson(TestDatabase.freshDatabase());
    config.getJsonObject("http").put("enabled", false);
    JsonObject other = TestAckpoint.configJson(TestDatabase.freshDatabase());
    other.getJsonObject("http").put("enabled", false);
    Ackpoint first = Await.result(TestAckpoint.start(vertx, config));

    Throwable refused = Await.result(TestAckpoint.start(vertx, other).<Throwable>transform(ar -> Future.succeededFuture(ar.cause())));
    assertInstanceOf(ConfigException.class, refused);
    assertTrue(refused.getMessage().contains("eventbus.prefix"), refused.getMessage());
    for (int expected = 1; expected <= 2; expected++) {
      JsonObject created = Await.result(vertx.eventBus().<JsonObject>request(ADDRESSES.checkpointCreate(),
          new JsonObject().put("user_id", "u"))).body();
      assertEquals(String.valueOf(expected), created.getString("write_checkpoint"));
    }

    // Once the first is closed, its prefix is free again.
    Await.result(first.close());
    Await.result(Await.result(TestAckpoint.start(vertx, other)).close());
  }

  @Test
  void aSecondAckpointOnThePortAnotherAckpointOfTheVertxServesIsRefusedAndTheFirstKeepsItsConnections(Vertx vertx) {
    JsonObject config = TestAckpoint.configJson(TestDatabase.freshDatabase());
    JsonObject other = TestAckpoint.configJson(TestDatabase.freshDatabase()).put("eventbus", new JsonObject().put("prefix", "other"));
    other.getJsonObject("http").put("port", TestAckpoint.portOf(config));
    Ackpoint first = Await.result(TestAckpoint.start(vertx, config));

    Throwable refused = Await.result(TestAckpoint.start(vertx, other).<Throwable>transform(ar -> Future.succeededFuture(ar.cause())));
    assertInstanceOf(ConfigException.class, refused);
    assertTrue(refused.getMessage().contains("http.port"), refused.getMessage());
    // Each connection its own, as Vert.x hands them to the servers of a port in turn: all the first's.
    WebClient client = WebClient.create(vertx, new WebClientOptions().setKeepAlive(false));
    String token = TestKeys.token(vertx, "u");
    for (int expected = 1; expected <= 4; expected++) {
      HttpResponse<Buffer> answer = Await.result(client.get(first.httpPort(), "127.0.0.1", "/write-checkpoint2.json?client_id=c")
          .putHeader("Authorization", "Bearer " + token).send());
      assertEquals(String.valueOf(expected), answer.bodyAsJsonObject().getJsonObject("data").getString("write_checkpoint"));
    }

    // Once the first is closed, its port is free again.
    Await.result(first.close());
    Await.result(Await.result(TestAckpoint.start(vertx, other)).close());
  }

  @Test
  void aMetricsPortIsNotClaimedByAnAckpointWhoseMetricsGoToTheHostsRegistry(Vertx vertx) {
    int metricsPort = TestAckpoint.freePort();
    JsonObject config = TestAckpoint.configJson(TestDatabase.freshDatabase()).put("metrics", new JsonObject().put("port", metricsPort));
    JsonObject other = TestAckpoint.configJson(TestDatabase.freshDatabase()).put("metrics", new JsonObject().put("port", metricsPort))
        .put("eventbus", new JsonObject().put("prefix", "other"));
    // No Prometheus text to serve: neither starts a metrics server, so neither takes the port.
    Ackpoint first = Await.result(Ackpoint.deploy(vertx, new AckpointOptions(config).setMeterRegistry(new SimpleMeterRegistry())));
    Ackpoint second = Await.result(Ackpoint.deploy(vertx, new AckpointOptions(other).setMeterRegistry(new SimpleMeterRegistry())));
    Await.result(second.close());
    Await.result(first.close());
  }

  @Test
  void anAckpointOnThePortAServerOfTheHostListensOnIsRefusedNamingTheKey(Vertx vertx) {
    JsonObject config = TestAckpoint.configJson(TestDatabase.freshDatabase());
    var host = Await.result(vertx.createHttpServer().requestHandler(request -> request.response().end("host"))
        .listen(TestAckpoint.portOf(config), "127.0.0.1"));

    Throwable refused = Await.result(TestAckpoint.start(vertx, config).<Throwable>transform(ar -> Future.succeededFuture(ar.cause())));
    assertInstanceOf(ConfigException.class, refused);
    assertTrue(refused.getMessage().contains("http.port"), refused.getMessage());
    Await.result(host.close());
  }

  @Test
  void deployOnAClosedVertxAnswersAFailedFutureSayingSo(@TempDir Path dir) {
    Vertx closed = Vertx.vertx();
    Await.result(closed.close());
    JsonObject external = TestAckpoint.configJson(TestDatabase.freshDatabase());
    JsonObject embedded = TestAckpoint.configJson(TestDatabase.freshDatabase());
    embedded.put("source", new JsonObject().put("type", "embedded")).put("storage", new JsonObject().put("type", "embedded"))
        .put("embedded", new JsonObject().put("data_dir", dir.toString()).put("port", TestAckpoint.freePort()));
    for (JsonObject config : List.of(external, embedded)) {
      Future<Ackpoint> deploy = Ackpoint.deploy(closed, new AckpointOptions(config));
      Throwable refused = Await.result(deploy.<Throwable>transform(ar -> Future.succeededFuture(ar.cause())));
      assertInstanceOf(IllegalStateException.class, refused, config.encode());
      assertTrue(refused.getMessage().contains("Vert.x is closed"), refused.getMessage());
    }
  }

  @Test
  void aSetterOfOptionsWhoseSectionIsNotAnObjectNamesTheKey() {
    AckpointOptions options = new AckpointOptions(new JsonObject().put("http", "x"));
    ConfigException refused = assertThrows(ConfigException.class, () -> options.setHttpEnabled(false));
    assertTrue(refused.getMessage().contains("'http'"), refused.getMessage());
  }

  /**
   * A verticle that deploys Ackpoint takes Ackpoint's verticles with it when it is undeployed; undone
   * while Ackpoint starts, it leaves nothing running, and the deploy says so rather than answering
   * an Ackpoint that runs nothing (its prefix free again, its pools closed).
   */
  @Test
  void aDeployWhoseVerticleIsUndeployedMeanwhileFailsSayingSoAndLeavesNothingTaken(Vertx vertx) throws Exception {
    String database = TestDatabase.freshDatabase();
    JsonObject config = TestAckpoint.configJson(database);
    config.getJsonObject("http").put("enabled", false);
    Await.result(Await.result(TestAckpoint.start(vertx, config)).close()); // migrated: the next start only reads
    Promise<Future<Ackpoint>> deploying = Promise.promise();
    try (Sql sql = new Sql(vertx, database)) {
      // Ackpoint's start waits, part-way through its verticles, for its read of the latest acknowledgement.
      SqlConnection blocker = Await.result(sql.pool().getConnection());
      Transaction tx = Await.result(blocker.begin());
      Await.result(blocker.query("LOCK TABLE ackpoint_write_checkpoints IN ACCESS EXCLUSIVE MODE").execute());
      String host = Await.result(vertx.deployVerticle(new VerticleBase() {
        @Override
        public Future<?> start() {
          deploying.complete(Ackpoint.deploy(vertx, new AckpointOptions(config)));
          return Future.succeededFuture();
        }
      }));
      awaitLockWaiter(vertx, sql);
      Await.result(vertx.undeploy(host));
      Await.result(tx.rollback());
      blocker.close();
    }
    Throwable refused = Await.result(deploying.future().compose(deploy -> deploy)
        .<Throwable>transform(ar -> Future.succeededFuture(ar.cause())));
    assertInstanceOf(IllegalStateException.class, refused);
    assertTrue(refused.getMessage().contains("undeployed"), refused.getMessage());
    Await.result(Await.result(TestAckpoint.start(vertx, config)).close());
  }

  @Test
  void deployRefusesAConfiguredKeyThatCannotVerifyAnythingNamingIt(Vertx vertx) {
    String database = TestDatabase.freshDatabase();
    List<Object> unusable = List.of(
        new JsonObject().put("kty", "oct").put("kid", "no-secret").put("alg", "HS256"),
        new JsonObject().put("kty", "oct").put("kid", "not-base64").put("k", "!!not base64!!"),
        new JsonObject().put("kty", "oct").put("kid", "wrong-alg").put("alg", "RS256").put("k", "c2VjcmV0"),
        new JsonObject().put("kty", "RSA").put("kid", "no-modulus"),
        new JsonObject().put("kty", "oct").put("kid", "misspelt-alg").put("alg", "hs256").put("k", "c2VjcmV0"),
        5);
    JsonObject withEncryptionKey = TestAckpoint.configJson(database);
    withEncryptionKey.getJsonObject("http").put("enabled", false);
    JsonArray pasted = withEncryptionKey.getJsonObject("auth").getJsonObject("jwks").getJsonArray("keys").copy()
        .add(new JsonObject().put("kty", "RSA").put("kid", "enc").put("use", "enc").put("alg", "RSA-OAEP"));
    withEncryptionKey.getJsonObject("auth").put("jwks", new JsonObject().put("keys", pasted));
    // An identity provider's JWKS pasted whole, encryption key included, is taken (its signing keys verify).
    Await.result(Await.result(TestAckpoint.start(vertx, withEncryptionKey)).close());

    for (Object key : unusable) {
      JsonObject config = TestAckpoint.configJson(database);
      config.getJsonObject("http").put("enabled", false);
      JsonArray keys = config.getJsonObject("auth").getJsonObject("jwks").getJsonArray("keys").copy().add(key);
      config.getJsonObject("auth").put("jwks", new JsonObject().put("keys", keys));
      Throwable refused = Await.result(TestAckpoint.start(vertx, config).<Throwable>transform(ar -> Future.succeededFuture(ar.cause())));
      assertInstanceOf(ConfigException.class, refused, String.valueOf(key));
      assertTrue(refused.getMessage().contains("auth.jwks") && refused.getMessage().contains("key " + keys.size()), refused.getMessage());
    }
  }

  @Test
  void closeTakesAckpointsMetersOutOfTheHostsRegistry(Vertx vertx) {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    JsonObject config = TestAckpoint.configJson(TestDatabase.freshDatabase());
    config.getJsonObject("http").put("enabled", false);
    Ackpoint first = Await.result(Ackpoint.deploy(vertx, new AckpointOptions(config).setMeterRegistry(registry)));
    assertTrue(registry.find("ackpoint.batches.in.flight").gauge() != null);
    Await.result(first.close());
    assertEquals(List.of(), registry.getMeters().stream().map(m -> m.getId().getName()).filter(n -> n.startsWith("ackpoint.")).toList());

    // The next one on the same registry has gauges of its own, not the closed one's.
    Ackpoint next = Await.result(Ackpoint.deploy(vertx, new AckpointOptions(config).setMeterRegistry(registry)));
    Await.result(vertx.eventBus().request(ADDRESSES.checkpointCreate(), new JsonObject().put("user_id", "u")));
    assertEquals(1, registry.get("ackpoint.batches").tag("outcome", "ok").counter().count());
    Await.result(next.close());
  }

  @Test
  void anHttpPortOfZeroIsOneRandomPortThatEveryEventLoopServesAndDeployTellsIt(Vertx vertx) {
    JsonObject config = TestAckpoint.configJson(TestDatabase.freshDatabase());
    config.getJsonObject("http").put("port", 0).put("instances", 2);
    Ackpoint ackpoint = Await.result(TestAckpoint.start(vertx, config));
    int port = ackpoint.httpPort();
    assertTrue(port > 0, "port " + port);
    // Both instances on one socket, as with a fixed port (each had a random port of its own).
    assertEquals(1, ((VertxInternal) vertx).sharedTcpServers().size());
    assertEquals(200, Await.result(WebClient.create(vertx).get(port, "127.0.0.1", "/probes/liveness").send()).statusCode());

    // Another Ackpoint of the same Vert.x with http.port 0 gets a port of its own, not a share of this one.
    JsonObject other = TestAckpoint.configJson(TestDatabase.freshDatabase()).put("eventbus", new JsonObject().put("prefix", "other"));
    other.getJsonObject("http").put("port", 0).put("instances", 2);
    Ackpoint second = Await.result(TestAckpoint.start(vertx, other));
    assertTrue(second.httpPort() > 0 && second.httpPort() != port, port + " / " + second.httpPort());
    Await.result(second.close());
    Await.result(ackpoint.close());
  }

  @Test
  void deployRefusesAnAllowedOriginThatIsNotAnOriginNamingTheKey(Vertx vertx) {
    JsonObject config = TestAckpoint.configJson(TestDatabase.freshDatabase());
    config.getJsonObject("http").put("cors", new JsonObject().put("allowed_origins", "https://app.example.com, garbage"));
    Throwable refused = Await.result(TestAckpoint.start(vertx, config).<Throwable>transform(ar -> Future.succeededFuture(ar.cause())));
    assertInstanceOf(ConfigException.class, refused);
    assertTrue(refused.getMessage().contains("http.cors.allowed_origins") && refused.getMessage().contains("garbage"),
        refused.getMessage());
  }

  @Test
  void closingOneOfTwoAckpointsOnARegistryLeavesTheOthersMeters(Vertx vertx) {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    JsonObject config = TestAckpoint.configJson(TestDatabase.freshDatabase());
    config.getJsonObject("http").put("enabled", false);
    JsonObject other = TestAckpoint.configJson(TestDatabase.freshDatabase()).put("eventbus", new JsonObject().put("prefix", "other"));
    other.getJsonObject("http").put("enabled", false);
    Ackpoint one = Await.result(Ackpoint.deploy(vertx, new AckpointOptions(config).setMeterRegistry(registry)));
    Ackpoint two = Await.result(Ackpoint.deploy(vertx, new AckpointOptions(other).setMeterRegistry(registry)));
    Await.result(one.close());
    Await.result(vertx.eventBus().request("other.checkpoint.create", new JsonObject().put("user_id", "u")));
    assertEquals(1, registry.get("ackpoint.batches").tag("outcome", "ok").counter().count());
    Await.result(two.close());
  }

  /** Polls until a statement waits for the test's lock: the batch is in flight. */
  private static void awaitLockWaiter(Vertx vertx, Sql sql) {
    Await.result(lockWaiter(vertx, sql, System.nanoTime() + 30_000_000_000L));
  }

  private static Future<Void> lockWaiter(Vertx vertx, Sql sql, long deadline) {
    return sql.pool().query("SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'ackpoint_write_checkpoints'::regclass")
        .execute().compose(rows -> {
          if (rows.iterator().next().getLong(0) > 0) {
            return Future.succeededFuture();
          }
          if (System.nanoTime() > deadline) {
            return Future.failedFuture(new AssertionError("no statement ever waited for the lock"));
          }
          return vertx.timer(20).compose(id -> lockWaiter(vertx, sql, deadline));
        });
  }

  /** A host that mounts Ackpoint's routes at /ackpoint and keeps Ackpoint for the test to close. */
  private static final class MountingHost extends VerticleBase {

    private final JsonObject config;
    private final int port;
    private final SimpleMeterRegistry registry;
    private Ackpoint ackpoint;

    MountingHost(JsonObject config, int port, SimpleMeterRegistry registry) {
      this.config = config;
      this.port = port;
      this.registry = registry;
    }

    @Override
    public Future<?> start() {
      return Ackpoint.deploy(vertx, new AckpointOptions(config).setHttpEnabled(false).setMeterRegistry(registry))
          .compose(deployed -> {
            ackpoint = deployed;
            return ackpoint.createRouter();
          })
          .compose(routes -> {
            Router router = Router.router(vertx);
            router.route("/ackpoint/*").subRouter(routes);
            return vertx.createHttpServer().requestHandler(router).listen(port, "127.0.0.1");
          });
    }
  }

  /**
   * A port another process holds fails the deploy before anything is set up: it failed only once the
   * migrations had run and the replication slot was made, which a first start that never succeeded
   * left on the source, holding back its WAL.
   */
  @Test
  void aPortInUseFailsTheDeployBeforeTheSlotOrTheTablesAreMade(Vertx vertx) throws Exception {
    String database = TestDatabase.freshDatabase();
    JsonObject config = TestAckpoint.withFollower(TestAckpoint.configJson(database));
    try (ServerSocket taken = new ServerSocket(TestAckpoint.portOf(config), 1, InetAddress.getLoopbackAddress());
         Sql sql = new Sql(vertx, database)) {
      Throwable failure = Await.result(Ackpoint.deploy(vertx, new AckpointOptions(config)).transform(Future::succeededFuture)).cause();
      assertTrue(failure != null && failure.getMessage().contains("(http.host, http.port)"), String.valueOf(failure));
      assertEquals(0, sql.count("SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1", TestAckpoint.slotOf(config)));
      assertEquals(0, sql.count("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'ackpoint%'"));
    }
  }

  @Test
  void anApplicationThatEndsWithoutClosingAckpointStopsItsEmbeddedDatabase(@TempDir Path dir) throws Exception {
    Process host = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp", System.getProperty("java.class.path"), ExitingHost.class.getName(),
        dir.toString()).redirectErrorStream(true).start();
    try (BufferedReader output = new BufferedReader(new InputStreamReader(host.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      do {
        line = output.readLine();
      } while (line != null && !line.equals("deployed"));
      assertEquals("deployed", line, "the host never deployed Ackpoint");
      long pid = Long.parseLong(Files.readAllLines(dir.resolve("postmaster.pid")).get(0).trim());
      ProcessHandle postmaster = ProcessHandle.of(pid).orElseThrow();
      host.destroy(); // SIGTERM: the JVM runs its shutdown hooks and exits; the application closes nothing
      assertTrue(host.waitFor(30, TimeUnit.SECONDS), "the host did not exit");
      postmaster.onExit().get(30, TimeUnit.SECONDS);
    } finally {
      host.destroyForcibly();
    }
  }
}
