package io.ackpoint.promise;

import io.ackpoint.support.TestAckpoint;
import io.ackpoint.source.Lsn;
import io.ackpoint.support.AckpointExtension;
import io.ackpoint.support.Await;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Progress published by another verticle is validated: a body that is not a position is rejected,
 * a position beyond the source's own head is rejected, and neither stalls later progress.
 */
@ExtendWith(VertxExtension.class)
class ProgressValidationTest {

  @RegisterExtension
  final AckpointExtension app = AckpointExtension.with(config -> config);
  private final String token = TestKeys.token("u1");

  private void publish(Object body) {
    app.vertx().eventBus().publish(TestAckpoint.ADDRESSES.replicationProgress(), body);
  }

  private String currentPosition() {
    return Lsn.format(app.sql().query("SELECT pg_current_wal_lsn()::text").iterator().next().getString(0));
  }

  @Test
  void garbageProgressIsRejectedAndLaterProgressStillAcknowledges() {
    app.api().checkpointRequest(token, "c", "3");
    try (StreamClient stream = StreamClient.syncStream(app.vertx(), app.port(), token, "c")) {
      stream.next();
      stream.next();
      publish(new JsonObject().put("position", "zz/yy"));
      publish(new JsonObject().put("position", "0/1/2"));
      publish(new JsonObject().put("position", 42));
      publish(new JsonObject().put("position", new JsonArray()));
      publish(new JsonObject());
      publish("not even json");
      publish(null);
      publish(new JsonObject().put("position", currentPosition()));
      assertEquals("3", stream.nextMatching(l -> l.containsKey("checkpoint_diff"))
          .getJsonObject("checkpoint_diff").getString("write_checkpoint"));
    }
    String metrics = app.metrics();
    assertTrue(metrics.matches("(?s).*ackpoint_replication_progress_rejected_total(\\{[^}]*})? 7\\.0.*"), metrics);
  }

  @Test
  void aPositionBeyondTheSourceHeadNeverMarksAnythingProcessed() {
    app.api().checkpointRequest(token, "c", "3");
    publish(new JsonObject().put("position", "FFFFFFFF/FFFFFFFF"));
    publish(new JsonObject().put("position", "7FFFFFFF/00000000"));
    // A real position after the bogus ones, recorded (consumers of the event bus hear it once it is):
    // so the bogus ones were dealt with before it.
    Promise<Void> recorded = Promise.promise();
    Await.result(app.vertx().eventBus().<JsonObject>consumer(TestAckpoint.ADDRESSES.checkpointReached(), msg -> {
      if ("other".equals(msg.body().getString("client_id"))) {
        recorded.tryComplete();
      }
    }).completion());
    app.api().checkpointRequest(token, "other", "1");
    publish(new JsonObject().put("position", currentPosition()));
    Await.result(recorded.future());
    app.api().checkpointRequest(token, "c", "4");
    assertEquals(1, app.sql().count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE processed_at_lsn IS NULL"),
        "the checkpoint stored after the real position is still pending");
  }
}
