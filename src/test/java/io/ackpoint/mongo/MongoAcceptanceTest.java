package io.ackpoint.mongo;

import io.ackpoint.Ackpoint;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestKeys;
import io.ackpoint.support.TestMongo;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.ackpoint.support.ApiClient.data;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Issue 13's acceptance: MongoDB as source and as storage, on the test server (mongo-java-server
 * with its oplog, see {@link TestMongo}), through Ackpoint's HTTP API and its follower.
 */
@ExtendWith(VertxExtension.class)
class MongoAcceptanceTest {

  @Test
  void checkpointsAreStoredAcknowledgedAndContinueAfterARestart(Vertx vertx) {
    JsonObject config = TestAckpoint.withFollower(TestAckpoint.onMongo(TestMongo.freshDatabase()));
    String token = TestKeys.token(vertx, "u1");

    Ackpoint first = Await.result(TestAckpoint.start(vertx, config));
    ApiClient api = new ApiClient(vertx, TestAckpoint.portOf(config));
    try {
      assertEquals("5", data(api.checkpointRequest(token, "c1", "5")).getString("checkpoint_request_id"));
      assertEquals("5", data(api.checkpointRequest(token, "c1", "3")).getString("checkpoint_request_id"),
          "a stale id answers the stored one");
      assertEquals("1", data(api.writeCheckpoint2(token, "c2")).getString("write_checkpoint"));
      try (StreamClient stream = StreamClient.syncStream(vertx, TestAckpoint.portOf(config), token, "c1")) {
        stream.nextMatching(line -> "5".equals(writeCheckpoint(line)));
      }
    } finally {
      Await.result(first.close());
    }

    Ackpoint second = Await.result(TestAckpoint.start(vertx, config));
    try {
      assertEquals("2", data(api.writeCheckpoint2(token, "c2")).getString("write_checkpoint"), "the sequence continues");
      assertEquals("5", data(api.checkpointRequest(token, "c1", "4")).getString("checkpoint_request_id"));
      try (StreamClient stream = StreamClient.syncStream(vertx, TestAckpoint.portOf(config), token, "c2")) {
        stream.nextMatching(line -> "2".equals(writeCheckpoint(line)));
      }
    } finally {
      api.close();
      Await.result(second.close());
    }
  }

  static String writeCheckpoint(JsonObject line) {
    JsonObject body = line.containsKey("checkpoint") ? line.getJsonObject("checkpoint") : line.getJsonObject("checkpoint_diff");
    return body == null ? null : body.getString("write_checkpoint");
  }
}
