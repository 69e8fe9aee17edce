package io.ackpoint.mongo;

import de.bwaldvogel.mongo.MongoServer;
import io.ackpoint.Ackpoint;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.ackpoint.support.TestMongo;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.ackpoint.support.ApiClient.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Any pairing of source and storage works; a source that cannot follow is refused, or told about. */
@ExtendWith(VertxExtension.class)
class MongoPairingsTest {

  /** Starts Ackpoint on {@code config}, has a checkpoint acknowledged on a stream, and stops it. */
  private static void acknowledgesACheckpoint(Vertx vertx, JsonObject config) {
    Ackpoint ackpoint = Await.result(TestAckpoint.start(vertx, config));
    ApiClient api = new ApiClient(vertx, TestAckpoint.portOf(config));
    String token = TestKeys.token(vertx, "pair");
    try (StreamClient stream = StreamClient.syncStream(vertx, TestAckpoint.portOf(config), token, "c")) {
      assertEquals("7", data(api.checkpointRequest(token, "c", "7")).getString("checkpoint_request_id"));
      stream.nextMatching(line -> "7".equals(MongoAcceptanceTest.writeCheckpoint(line)));
      JsonObject readiness = data(ApiClient.send(api.request(HttpMethod.GET, "/probes/readiness"), null));
      assertTrue(readiness.getBoolean("ready"), readiness.encode());
    } finally {
      api.close();
      Await.result(ackpoint.close());
    }
  }

  @Test
  void mongoSourceWithMongoStorage(Vertx vertx) {
    acknowledgesACheckpoint(vertx, TestAckpoint.withFollower(TestAckpoint.onMongo(TestMongo.freshDatabase())));
  }

  @Test
  void mongoSourceWithPostgresStorage(Vertx vertx) {
    JsonObject config = TestAckpoint.withFollower(TestAckpoint.configJson(TestDatabase.freshDatabase()));
    acknowledgesACheckpoint(vertx, TestAckpoint.withMongoSource(config, TestMongo.freshDatabase()));
  }

  @Test
  void postgresSourceWithMongoStorage(Vertx vertx) {
    JsonObject config = TestAckpoint.withFollower(TestAckpoint.configJson(TestDatabase.freshDatabase()));
    acknowledgesACheckpoint(vertx, TestAckpoint.withMongoStorage(config, TestMongo.freshDatabase()));
  }

  @Test
  void aServerThatCannotOpenAChangeStreamIsRefusedAtStart(Vertx vertx) {
    MongoServer standalone = TestMongo.withoutOplog();
    try {
      String uri = standalone.getConnectionString() + "/app";
      JsonObject config = TestAckpoint.withFollower(TestAckpoint.withMongoSource(
          TestAckpoint.configJson(TestDatabase.freshDatabase()), uri));
      Throwable refused = assertThrows(Throwable.class, () -> Await.result(TestAckpoint.start(vertx, config)));
      assertTrue(refused.getMessage().contains("cannot open a change stream"), refused.getMessage());
      assertTrue(refused.getMessage().contains("replica set"), refused.getMessage());
    } finally {
      standalone.shutdownNow();
    }
  }

  @Test
  void aSourceThatDoesNotAnswerStopsNothingAndReadinessSaysWhy(Vertx vertx) {
    String nobody = "mongodb://127.0.0.1:" + TestAckpoint.freePort() + "/app";
    JsonObject config = TestAckpoint.withFollower(TestAckpoint.configJson(TestDatabase.freshDatabase()));
    TestAckpoint.withMongoSource(config, nobody).getJsonObject("source").put("connect_timeout", "300ms");
    Ackpoint ackpoint = Await.result(TestAckpoint.start(vertx, config));
    ApiClient api = new ApiClient(vertx, TestAckpoint.portOf(config));
    try {
      JsonObject readiness = data(ApiClient.send(api.request(HttpMethod.GET, "/probes/readiness"), null));
      assertFalse(readiness.getBoolean("ready"));
      assertFalse(readiness.getBoolean("source"));
      assertTrue(readiness.getString("reason").contains("change stream lost"), readiness.encode());
    } finally {
      api.close();
      Await.result(ackpoint.close());
    }
  }
}
