package io.ackpoint.fault;

import io.ackpoint.ack.AckEngineVerticle;
import io.ackpoint.storage.PgMigrations;
import io.ackpoint.support.LogCapture;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TcpProxy;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The source is replaced, while Ackpoint runs, by a server whose position is behind what replication
 * had reached (a standby that was behind took over, or a backup was restored): a checkpoint stored
 * at the new server's head is acknowledged once the new server's replication passes it, and not at
 * once because the old server's positions were beyond it.
 */
@ExtendWith(VertxExtension.class)
class SourceRewindTest {

  /** Here the new server replicates nothing at all (it has no replication slots): every acknowledgement would be an early one. */
  @Test
  void aCheckpointStoredAfterTheSourceWentBackIsNotAcknowledgedBeforeTheNewSourceReplicatesIt(Vertx vertx, @TempDir Path dir)
      throws IOException {
    try (EmbeddedPostgres behind = server(dir, "0")) {
      replaced(vertx, behind, (app, token, next) -> {
        HttpResponse<Buffer> response = awaitingStored(app, token, "2");
        assertEquals(false, ApiClient.data(response).getBoolean("acknowledged"), response.bodyAsString());
        HttpResponse<Buffer> legacy = legacy(app, token);
        assertEquals(504, legacy.statusCode(), legacy.bodyAsString());
        try (Sql after = new Sql(vertx, next)) {
          assertNull(after.query("SELECT processed_at_lsn FROM ackpoint_write_checkpoints WHERE user_id = 'u'")
              .iterator().next().getString(0), "pending in storage too");
        }
      });
    }
  }

  @Test
  void afterTheSourceWentBackCheckpointsAreAcknowledgedByTheNewSourcesReplication(Vertx vertx, @TempDir Path dir)
      throws IOException {
    try (EmbeddedPostgres behind = server(dir, "4")) {
      replaced(vertx, behind, (app, token, next) -> {
        HttpResponse<Buffer> response = awaitingStored(app, token, "2");
        for (int retry = 0; retry < 15 && !ApiClient.data(response).getBoolean("acknowledged"); retry++) {
          // Until the follower has found the new server (it retries with a backoff): sent again, as a client would.
          response = awaitingStored(app, token, "2");
        }
        assertEquals(true, ApiClient.data(response).getBoolean("acknowledged"), response.bodyAsString());
        HttpResponse<Buffer> legacy = legacy(app, token);
        assertEquals(200, legacy.statusCode(), legacy.bodyAsString());
      });
    }
  }

  /** No batch is stored on the new server before the follower opens its stream there: it is the follower that finds it. */
  @Test
  void theFollowerFindsASourceThatWentBackAsItOpensItsStream(Vertx vertx, @TempDir Path dir) throws IOException {
    try (EmbeddedPostgres behind = server(dir, "4");
         LogCapture engine = LogCapture.of(AckEngineVerticle.class.getName());
         LogCapture batches = LogCapture.of("io.ackpoint.batch.SourceRewinds")) {
      replaced(vertx, behind, (app, token, next) -> {
        try {
          assertTrue(engine.awaitMessage("WARN", Duration.ofSeconds(30)).contains("a new engine starts"));
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
        assertEquals(List.of(), batches.messages("WARN"), "no batch was stored since the switch");
        HttpResponse<Buffer> response = awaitingStored(app, token, "2");
        assertEquals(true, ApiClient.data(response).getBoolean("acknowledged"), response.bodyAsString());
      });
    }
  }

  private interface AfterTheSwitch {
    /** {@code next}: the URI of the database on the server that took over. */
    void check(RunningAckpoint app, String token, String next);
  }

  /**
   * Runs Ackpoint on a database of the test server, through a proxy, until a checkpoint is
   * acknowledged; then the proxy leads to a database of that name on {@code behind}, whose WAL is
   * behind the test server's, and its open connections are cut.
   */
  private static void replaced(Vertx vertx, EmbeddedPostgres behind, AfterTheSwitch after) {
    String uri = TestDatabase.freshDatabase();
    String name = uri.substring(uri.lastIndexOf('/') + 1);
    try (Sql postgres = new Sql(vertx, "postgresql://postgres@localhost:" + behind.getPort() + "/postgres")) {
      postgres.query("CREATE DATABASE " + name);
    }
    String nextUri = "postgresql://postgres@localhost:" + behind.getPort() + "/" + name;
    try (Sql before = new Sql(vertx, uri); Sql next = new Sql(vertx, nextUri)) {
      Await.result(PgMigrations.migrate(next.pool()));
      // The old server's WAL well ahead of the new one's.
      for (int i = 0; i < 3; i++) {
        before.query("SELECT pg_switch_wal() FROM (SELECT pg_logical_emit_message(true, 'test', 'wal')) x");
      }
    }
    TcpProxy proxy = TcpProxy.start(vertx, "localhost", TestDatabase.port());
    try (RunningAckpoint app = RunningAckpoint.on(vertx, proxy.proxied(uri), c -> {
      TestAckpoint.withFollower(c);
      c.put("acknowledgement", new JsonObject().put("legacy_timeout", "2s"));
      return c;
    })) {
      String token = TestKeys.token(vertx, "u");
      JsonObject first = ApiClient.data(app.api.checkpointRequestAwaiting(token, "{\"client_id\":\"c\",\"checkpoint_request_id\":\"1\"}", 30));
      assertEquals(true, first.getBoolean("acknowledged"), first.encode());
      proxy.retarget("localhost", behind.getPort());
      proxy.cutAll();
      after.check(app, token, nextUri);
    } finally {
      proxy.close();
    }
  }

  private static EmbeddedPostgres server(Path dir, String replicationSlots) throws IOException {
    return EmbeddedPostgres.builder()
        .setDataDirectory(dir).setCleanDataDirectory(true)
        .setServerConfig("wal_level", "logical")
        .setServerConfig("max_replication_slots", replicationSlots)
        .setServerConfig("synchronous_commit", "on")
        .start();
  }

  /** A checkpoint request waiting 2 s for its acknowledgement, sent again while storage answers 503 (its connections were cut). */
  private static HttpResponse<Buffer> awaitingStored(RunningAckpoint app, String token, String id) {
    HttpResponse<Buffer> response = awaiting(app, token, id);
    for (int retry = 0; retry < 100 && response.statusCode() == 503; retry++) {
      response = awaiting(app, token, id);
    }
    assertEquals(200, response.statusCode(), response.bodyAsString());
    return response;
  }

  private static HttpResponse<Buffer> awaiting(RunningAckpoint app, String token, String id) {
    return app.api.checkpointRequestAwaiting(token, "{\"client_id\":\"c\",\"checkpoint_request_id\":\"" + id + "\"}", 2);
  }

  private static HttpResponse<Buffer> legacy(RunningAckpoint app, String token) {
    return ApiClient.send(app.api.request(HttpMethod.GET, "/write-checkpoint.json").putHeader("Authorization", "Bearer " + token), null);
  }
}
