package io.ackpoint.ack;

import io.ackpoint.Ackpoint;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A checkpoint left pending when Ackpoint stops is acknowledged after it starts again. */
@ExtendWith(VertxExtension.class)
class RestartTest {

  @Test
  void aPendingCheckpointIsAcknowledgedAfterARestart(Vertx vertx) {
    String db = TestDatabase.freshDatabase();
    String token = TestKeys.token(vertx, "u1");
    // First life: nothing follows replication, so the checkpoint stays pending.
    JsonObject first = TestAckpoint.configJson(db);
    Ackpoint before = Await.result(TestAckpoint.start(vertx, first));
    assertEquals(200, new ApiClient(vertx, TestAckpoint.portOf(first)).checkpointRequest(token, "c1", "9").statusCode());
    Await.result(before.close());

    JsonObject second = TestAckpoint.withFollower(TestAckpoint.configJson(db));
    Ackpoint after = Await.result(TestAckpoint.start(vertx, second));
    try (StreamClient stream = StreamClient.syncStream(vertx, TestAckpoint.portOf(second), token, "c1")) {
      JsonObject line = stream.nextMatching(l -> "9".equals(body(l).getString("write_checkpoint")));
      assertEquals("9", body(line).getString("write_checkpoint"));
    } finally {
      Await.result(after.close());
    }
  }

  private static JsonObject body(JsonObject line) {
    if (line.containsKey("checkpoint")) {
      return line.getJsonObject("checkpoint");
    }
    return line.containsKey("checkpoint_diff") ? line.getJsonObject("checkpoint_diff") : new JsonObject();
  }
}
