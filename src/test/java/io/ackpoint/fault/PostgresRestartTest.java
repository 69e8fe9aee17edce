package io.ackpoint.fault;

import io.ackpoint.Ackpoint;
import io.ackpoint.config.AckpointConfig.EmbeddedConfig;
import io.ackpoint.embedded.EmbeddedDatabase;
import io.ackpoint.support.ApiClient;
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

/** A PostgreSQL restart is survived without restarting Ackpoint, and no acknowledged write is lost. */
@ExtendWith(VertxExtension.class)
class PostgresRestartTest {

  private static String diffId(JsonObject line) {
    return line.getJsonObject("checkpoint_diff").getString("write_checkpoint");
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
