package io.ackpoint;

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
    String token = TestKeys.token(vertx, "restart");

    assertEquals("1", runOnce(vertx, json, api -> data(api.writeCheckpoint2(token, "c1")).getString("write_checkpoint")));
    assertEquals("2", runOnce(vertx, json, api -> data(api.writeCheckpoint2(token, "c1")).getString("write_checkpoint")));
  }

  /** Deploy starts the embedded database and close stops it: the second run finds the first one's data. */
  private static String runOnce(Vertx vertx, JsonObject json, java.util.function.Function<ApiClient, String> call) {
    Ackpoint ackpoint = Await.result(TestAckpoint.start(vertx, json));
    ApiClient api = new ApiClient(vertx, TestAckpoint.portOf(json));
    try {
      return call.apply(api);
    } finally {
      api.close();
      Await.result(ackpoint.close());
    }
  }
}
