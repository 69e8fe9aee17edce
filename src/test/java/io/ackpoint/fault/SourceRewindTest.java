package io.ackpoint.fault;

import io.ackpoint.storage.PgMigrations;
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

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The source is replaced, while Ackpoint runs, by a server whose position is behind what replication
 * had reached (a standby that was behind took over, or a backup was restored): a checkpoint stored
 * at the new server's head is acknowledged only once the new server's replication passes it, not at
 * once because the old server's positions were beyond it. Here the new server replicates nothing at
 * all (it has no replication slots), so every acknowledgement would be an early one.
 */
@ExtendWith(VertxExtension.class)
class SourceRewindTest {

  @Test
  void aCheckpointStoredAfterTheSourceWentBackWaitsForTheNewSourcesReplication(Vertx vertx, @TempDir Path dir) throws Exception {
    String uri = TestDatabase.freshDatabase();
    String name = uri.substring(uri.lastIndexOf('/') + 1);
    try (EmbeddedPostgres behind = EmbeddedPostgres.builder()
        .setDataDirectory(dir).setCleanDataDirectory(true)
        .setServerConfig("wal_level", "logical")
        .setServerConfig("max_replication_slots", "0")
        .setServerConfig("synchronous_commit", "on")
        .start()) {
      String behindUri = "postgresql://postgres@localhost:" + behind.getPort() + "/" + name;
      try (Sql postgres = new Sql(vertx, "postgresql://postgres@localhost:" + behind.getPort() + "/postgres")) {
        postgres.query("CREATE DATABASE " + name);
      }
      try (Sql before = new Sql(vertx, uri); Sql after = new Sql(vertx, behindUri)) {
        Await.result(PgMigrations.migrate(after.pool()));
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

        HttpResponse<Buffer> response = awaiting(app, token, "2");
        for (int retry = 0; retry < 100 && response.statusCode() == 503; retry++) {
          response = awaiting(app, token, "2"); // as a client retries a 503
        }
        assertEquals(200, response.statusCode(), response.bodyAsString());
        assertEquals(false, ApiClient.data(response).getBoolean("acknowledged"), response.bodyAsString());
        HttpResponse<Buffer> legacy = ApiClient.send(app.api.request(HttpMethod.GET, "/write-checkpoint.json")
            .putHeader("Authorization", "Bearer " + token), null);
        assertEquals(504, legacy.statusCode(), legacy.bodyAsString());
        try (Sql after = new Sql(vertx, behindUri)) {
          assertNull(after.query("SELECT processed_at_lsn FROM ackpoint_write_checkpoints WHERE user_id = 'u'")
              .iterator().next().getString(0), "pending in storage too");
        }
      } finally {
        proxy.close();
      }
    }
  }

  private static HttpResponse<Buffer> awaiting(RunningAckpoint app, String token, String id) {
    return app.api.checkpointRequestAwaiting(token, "{\"client_id\":\"c\",\"checkpoint_request_id\":\"" + id + "\"}", 2);
  }
}
