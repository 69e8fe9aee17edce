package io.ackpoint.ack;

import io.ackpoint.Ackpoint;
import io.ackpoint.AckpointAddresses;
import io.ackpoint.source.Lsn;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.Sql;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a restart, or a node that did not hear an acknowledgement, must not change: pending
 * checkpoints are acknowledged, sequences do not go back.
 */
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

  @Test
  void aStreamOpenedBeforeTheRestartedNodeHearsAPositionIsNotToldALowerSequence(Vertx vertx) {
    String db = TestDatabase.freshDatabase();
    String token = TestKeys.token(vertx, "u1");
    JsonObject first = TestAckpoint.withFollower(TestAckpoint.configJson(db));
    Ackpoint before = Await.result(TestAckpoint.start(vertx, first));
    long told;
    try (StreamClient stream = StreamClient.syncStream(vertx, TestAckpoint.portOf(first), token, "c1")) {
      new ApiClient(vertx, TestAckpoint.portOf(first)).checkpointRequest(token, "c1", "9");
      JsonObject line = stream.nextMatching(l -> "9".equals(body(l).getString("write_checkpoint")));
      told = Long.parseLong(body(line).getString("last_op_id"));
    } finally {
      Await.result(before.close());
    }

    // Second life: nothing follows replication, so the node never hears a position of its own.
    JsonObject second = TestAckpoint.configJson(db);
    Ackpoint after = Await.result(TestAckpoint.start(vertx, second));
    try (StreamClient stream = StreamClient.syncStream(vertx, TestAckpoint.portOf(second), token, "c1")) {
      JsonObject line = stream.next().getJsonObject("checkpoint");
      assertEquals("9", line.getString("write_checkpoint"));
      long reopened = Long.parseLong(line.getString("last_op_id"));
      assertTrue(reopened >= told, "told " + told + " before the restart, " + reopened + " after");
    } finally {
      Await.result(after.close());
    }
  }

  /**
   * Storage holds an id acknowledged at a position this node never heard (another node's engine
   * marked it: a failover, a split cluster): the stream's first line pairs it with a sequence no
   * lower than that position's, and so never one before the head of the write.
   */
  @Test
  void aStreamOnANodeThatDidNotHearTheAcknowledgementIsToldItsIdAtNoLowerSequenceThanItsPosition(Vertx vertx) {
    String db = TestDatabase.freshDatabase();
    String token = TestKeys.token(vertx, "u1");
    // This node follows nothing: it hears no position of its own or of the other.
    JsonObject deaf = TestAckpoint.configJson(db);
    Ackpoint unaware = Await.result(TestAckpoint.start(vertx, deaf));
    JsonObject other = TestAckpoint.withFollower(TestAckpoint.configJson(db)).put("eventbus", new JsonObject().put("prefix", "other"));
    Ackpoint engine = Await.result(TestAckpoint.start(vertx, other));
    Promise<Void> recorded = Promise.promise();
    // Told to event-bus consumers once a statement has recorded it.
    vertx.eventBus().<JsonObject>consumer(new AckpointAddresses("other").checkpointReached(), msg -> {
      if ("9".equals(msg.body().getString("write_checkpoint"))) {
        recorded.tryComplete();
      }
    });
    try (Sql sql = new Sql(vertx, db)) {
      assertEquals(200, new ApiClient(vertx, TestAckpoint.portOf(other)).checkpointRequest(token, "c1", "9").statusCode());
      Await.result(recorded.future());
      Row row = sql.query("SELECT processed_at_lsn, lsns->>'1' FROM ackpoint_write_checkpoints WHERE user_id = 'u1'").iterator().next();
      try (StreamClient stream = StreamClient.syncStream(vertx, TestAckpoint.portOf(deaf), token, "c1")) {
        JsonObject line = stream.next().getJsonObject("checkpoint");
        assertEquals("9", line.getString("write_checkpoint"));
        long opened = Long.parseLong(line.getString("last_op_id"));
        assertTrue(opened >= Lsn.FORMAT.ordinal(row.getString(0)),
            "processed at " + row.getString(0) + " (head " + row.getString(1) + "), told at sequence " + opened);
      }
    } finally {
      Await.result(engine.close());
      Await.result(unaware.close());
    }
  }

  private static JsonObject body(JsonObject line) {
    if (line.containsKey("checkpoint")) {
      return line.getJsonObject("checkpoint");
    }
    return line.containsKey("checkpoint_diff") ? line.getJsonObject("checkpoint_diff") : new JsonObject();
  }
}
