package io.ackpoint.fault;

import io.ackpoint.Ackpoint;
import io.ackpoint.config.AckpointConfig.EmbeddedConfig;
import io.ackpoint.embedded.EmbeddedDatabase;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Readiness;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.Await;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A PostgreSQL restart is survived without restarting Ackpoint, and no acknowledged write is lost. */
@ExtendWith(VertxExtension.class)
class PostgresRestartTest {

  private static String diffId(JsonObject line) {
    return line.getJsonObject("checkpoint_diff").getString("write_checkpoint");
  }

  @Test
  void aCleanPostgresStopEndsTheReplicationStreamAndReadinessSaysSoAtOnce(Vertx vertx, @TempDir Path dir) {
    EmbeddedConfig database = new EmbeddedConfig(dir, TestAckpoint.freePort());
    EmbeddedDatabase postgres = EmbeddedDatabase.start(database);
    // A long status interval: the follower must not need a status write to learn that its stream ended.
    try (RunningAckpoint app = RunningAckpoint.on(vertx, postgres.uri(), c -> {
      TestAckpoint.withFollower(c).getJsonObject("replication").put("status_interval", "60s");
      return c;
    })) {
      assertTrue(Readiness.probe(app).getBoolean("replication"));
      // A clean stop: the server ends the replication stream (its socket is closed, not cut).
      postgres.close();
      JsonObject readiness = Readiness.await(vertx, app, r -> !r.getBoolean("replication"));
      assertFalse(readiness.getBoolean("ready"), readiness.encode());

      postgres = EmbeddedDatabase.start(database);
      Readiness.await(vertx, app, r -> r.getBoolean("ready"));
      String token = TestKeys.token(vertx, "after-stop");
      JsonObject answer = ApiClient.data(app.api.checkpointRequestAwaiting(token, "{\"client_id\":\"c\",\"checkpoint_request_id\":\"1\"}", 30));
      assertEquals(true, answer.getBoolean("acknowledged"), answer.encode());
    } finally {
      postgres.close();
    }
  }

  @Test
  void aPostgresRestartIsSurvivedWithoutRestartingAckpoint(Vertx vertx, @TempDir Path dir) {
    EmbeddedConfig database = new EmbeddedConfig(dir, TestAckpoint.freePort());
    EmbeddedDatabase postgres = EmbeddedDatabase.start(database);
    JsonObject config = TestAckpoint.withFollower(TestAckpoint.configJson(postgres.uri()));
    Ackpoint ackpoint = Await.result(TestAckpoint.start(vertx, config));
    ApiClient api = new ApiClient(vertx, TestAckpoint.portOf(config));
    String token = TestKeys.token(vertx, "u");
    try (StreamClient stream = StreamClient.syncStream(vertx, TestAckpoint.portOf(config), token, "c")) {
      stream.next();
      stream.next();
      assertEquals(200, api.checkpointRequest(token, "c", "1").statusCode());
      assertEquals("1", diffId(stream.nextMatching(l -> l.containsKey("checkpoint_diff"))));

      postgres.close();
      postgres = EmbeddedDatabase.start(database);

      HttpResponse<Buffer> response = api.checkpointRequest(token, "c", "2");
      for (int retry = 0; retry < 100 && response.statusCode() == 503; retry++) {
        response = api.checkpointRequest(token, "c", "2"); // as a client retries a 503
      }
      assertEquals(200, response.statusCode(), response.bodyAsString());
      // The follower reconnects to the restarted server and the write is acknowledged.
      assertEquals("2", diffId(stream.nextMatching(l -> l.containsKey("checkpoint_diff"))));
    } finally {
      Await.result(ackpoint.close());
      postgres.close();
    }
  }
}
