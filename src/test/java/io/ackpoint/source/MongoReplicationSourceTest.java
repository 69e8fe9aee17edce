package io.ackpoint.source;

import io.ackpoint.core.MarkerDecision;
import io.ackpoint.support.Await;
import io.ackpoint.support.TestMongo;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.mongo.MongoClient;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * MongoDB as a source, on the test server. It keeps no logical clock, so heads come from its oplog
 * here; the cluster-time path of a real replica set is {@link ClusterTimeTest}'s.
 */
@ExtendWith(VertxExtension.class)
class MongoReplicationSourceTest {

  private MongoClient client;
  private MongoClient local;
  private MongoReplicationSource source;

  @BeforeEach
  void connect(Vertx vertx) {
    String uri = TestMongo.freshDatabase();
    client = MongoClient.create(vertx, new JsonObject().put("connection_string", uri));
    local = MongoClient.create(vertx, new JsonObject().put("connection_string", uri).put("db_name", "local"));
    source = new MongoReplicationSource(client, () -> local);
  }

  @AfterEach
  void close() {
    Await.result(client.close());
    Await.result(local.close());
  }

  private JsonObject marker() {
    return Await.result(client.findOne(MongoReplicationSource.MARKERS, new JsonObject().put("_id", "checkpoint"), null));
  }

  @Test
  void theHeadIsAClusterTimeThatTheMarkerPasses() {
    String before = Await.result(source.readHead());
    assertTrue(before.matches("[0-9A-F]{16}"), before);
    Await.result(source.forceMarker());
    String after = Await.result(source.readHead());
    assertTrue(after.compareTo(before) > 0, before + " then " + after);
    Await.result(source.forceMarker());
    assertEquals(2, marker().getInteger("i"), "one $inc upsert on one fixed document per marker");
  }

  @Test
  void theMarkerComesAfterTheCallbackAndOnlyWhenAsked() {
    record Decision(boolean shouldAdvance) implements MarkerDecision {
    }
    List<Object> seenInCallback = new ArrayList<>();
    Await.result(source.createReplicationHead(head -> client
        .findOne(MongoReplicationSource.MARKERS, new JsonObject().put("_id", "checkpoint"), null)
        .map(doc -> {
          seenInCallback.add(doc == null ? "no marker" : doc);
          return new Decision(true);
        })));
    assertEquals(List.of("no marker"), seenInCallback, "the callback runs before the marker");
    assertEquals(1, marker().getInteger("i"), "asked for: one marker");
    Await.result(source.createReplicationHead(head -> Future.succeededFuture(new Decision(false))));
    assertEquals(1, marker().getInteger("i"), "nothing pending: no marker");
  }
}
