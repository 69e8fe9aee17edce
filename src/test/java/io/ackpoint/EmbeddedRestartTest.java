package io.ackpoint;

import io.ackpoint.config.AckpointConfig;
import io.ackpoint.embedded.EmbeddedDatabase;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static io.ackpoint.support.ApiClient.data;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The embedded default keeps its data in embedded.data_dir: a restarted Ackpoint continues every sequence. */
@ExtendWith(VertxExtension.class)
class EmbeddedRestartTest {

  @Test
  void checkpointsSurviveARestartOnTheSameDataDirectory(Vertx vertx, @TempDir Path dataDir) {
    JsonObject json = TestAckpoint.configJson("unused")
        .put("source", new JsonObject().put("type", "embedded"))
        .put("storage", new JsonObject().put("type", "embedded"))
        .put("embedded", new JsonObject().put("data_dir", dataDir.toString()));
    AckpointConfig config = TestAckpoint.config(json);
    String token = TestKeys.token(vertx, "restart");

    assertEquals("1", runOnce(vertx, config, api -> data(api.writeCheckpoint2(token, "c1")).getString("write_checkpoint")));
    assertEquals("2", runOnce(vertx, config, api -> data(api.writeCheckpoint2(token, "c1")).getString("write_checkpoint")));
  }

  private static String runOnce(Vertx vertx, AckpointConfig config, java.util.function.Function<ApiClient, String> call) {
    try (EmbeddedDatabase database = EmbeddedDatabase.start(config.embedded())) {
      Ackpoint ackpoint = Await.result(Ackpoint.start(vertx, config.withEmbeddedUri(database.uri())));
      ApiClient api = new ApiClient(vertx, config.http().port());
      try {
        return call.apply(api);
      } finally {
        api.close();
        Await.result(ackpoint.close());
      }
    }
  }
}
