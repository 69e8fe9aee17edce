package io.ackpoint.ack;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.support.AckpointExtension;
import io.ackpoint.support.HeldAcknowledgements;
import io.ackpoint.support.Await;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static io.ackpoint.support.ApiClient.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A checkpoint is told to its streams as soon as replication passes its head, not after the
 * statement that records it, which may wait its turn. Here that statement is held for as long as
 * the test wants ({@link HeldAcknowledgements}). The follower, the batch and the streams are the real ones.
 */
@ExtendWith(VertxExtension.class)
class EarlyReleaseTest {

  @RegisterExtension
  final AckpointExtension app = AckpointExtension.with(TestAckpoint::withFollower);
  private final String token = TestKeys.token("u1");

  @Test
  void aStreamHearsItsCheckpointOnceReplicationPassesItsHeadBeforeStorageRecordsIt() {
    try (HeldAcknowledgements held = HeldAcknowledgements.hold(app.sql());
         StreamClient stream = app.stream(token, "c1")) {
      String id = requestOnOpenedStream(stream);
      assertEquals(id, stream.nextMatching(line -> line.containsKey("checkpoint_diff"))
          .getJsonObject("checkpoint_diff").getString("write_checkpoint"));
      assertEquals(0, app.sql().count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE processed_at_lsn IS NOT NULL"),
          "storage has not recorded it yet");
    }
  }

  @Test
  void aStreamOpenedAfterTheReleaseStartsFromItThoughStorageHasNotRecordedIt() {
    try (HeldAcknowledgements held = HeldAcknowledgements.hold(app.sql());
         StreamClient stream = app.stream(token, "c1")) {
      String id = requestOnOpenedStream(stream);
      JsonObject diff = stream.nextMatching(line -> line.containsKey("checkpoint_diff")).getJsonObject("checkpoint_diff");
      try (StreamClient reopened = app.stream(token, "c1")) {
        JsonObject first = reopened.next().getJsonObject("checkpoint");
        assertEquals(id, first.getString("write_checkpoint"));
        assertEquals(diff.getString("last_op_id"), first.getString("last_op_id"), "at the sequence it was released at");
      }
      assertNull(Await.result(app.sql().pool().query("SELECT processed_at_lsn FROM ackpoint_write_checkpoints").execute())
          .iterator().next().getValue(0), "storage has not recorded it yet");
    }
  }

  @Test
  void eventBusConsumersAreToldOnceStorageHasRecordedIt() throws InterruptedException {
    BlockingQueue<JsonObject> told = new LinkedBlockingQueue<>();
    Await.result(app.vertx().eventBus().<JsonObject>consumer(new AckpointAddresses(AckpointAddresses.DEFAULT_PREFIX).checkpointReached(),
        msg -> told.add(msg.body())).completion());
    String id;
    try (HeldAcknowledgements held = HeldAcknowledgements.hold(app.sql());
         StreamClient stream = app.stream(token, "c1")) {
      id = requestOnOpenedStream(stream);
      stream.nextMatching(line -> line.containsKey("checkpoint_diff"));
      assertNull(told.poll(), "not before storage records it");
    }
    JsonObject reached = told.poll(20, TimeUnit.SECONDS);
    assertEquals(id, reached == null ? null : reached.getString("write_checkpoint"));
    assertEquals(1, app.sql().count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE processed_at_lsn IS NOT NULL"));
  }

  /** Reads the stream's opening lines, then requests checkpoint 7 of its user; answers the id stored. */
  private String requestOnOpenedStream(StreamClient stream) {
    stream.next();
    stream.next();
    return data(app.api().checkpointRequest(token, "c1", "7")).getString("checkpoint_request_id");
  }
}
