package io.ackpoint.ack;

import io.ackpoint.support.TestAckpoint;
import io.ackpoint.Ackpoint;
import io.ackpoint.source.Lsn;
import io.ackpoint.support.Await;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.Sql;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * With the built-in follower off, progress comes from another verticle on
 * {@code ackpoint.replication.progress}. That also makes the markers countable: a test_decoding slot
 * of the test's own shows every logical message Ackpoint writes.
 */
@ExtendWith(VertxExtension.class)
class ExternalProgressTest {

  private Vertx vertx;
  private RunningAckpoint app;
  private String token;
  private String peekSlot;
  /** "client/id" of each acknowledgement storage recorded, as event-bus consumers hear them. */
  private final BlockingQueue<String> recorded = new LinkedBlockingQueue<>();

  @BeforeEach
  void start(Vertx vertx) {
    this.vertx = vertx;
    String db = TestDatabase.freshDatabase();
    peekSlot = "peek_" + db.substring(db.lastIndexOf('/') + 1);
    try (Sql setup = new Sql(vertx, db)) {
      setup.query("SELECT pg_create_logical_replication_slot($1, 'test_decoding')", peekSlot);
    }
    app = RunningAckpoint.on(vertx, db, c -> c);
    token = TestKeys.token(vertx, "u1");
    Await.result(vertx.eventBus().<JsonObject>consumer(TestAckpoint.ADDRESSES.checkpointReached(),
        msg -> recorded.add(msg.body().getString("client_id") + "/" + msg.body().getString("write_checkpoint"))).completion());
  }

  @AfterEach
  void stop() {
    Await.result(app.ackpoint.close());
    app.sql.query("SELECT pg_drop_replication_slot($1)", peekSlot);
    app.sql.close();
  }

  private long markers() {
    return app.sql.count("SELECT count(*) FROM pg_logical_slot_peek_changes($1, NULL, NULL)"
        + " WHERE data LIKE 'message:%prefix: ackpoint%'", peekSlot);
  }

  /** Publishes the source's current position, as an external replication follower would. */
  private void publishCurrentPosition() {
    String lsn = app.sql.query("SELECT pg_current_wal_lsn()::text").iterator().next().getString(0);
    vertx.eventBus().publish(TestAckpoint.ADDRESSES.replicationProgress(), new JsonObject().put("position", Lsn.format(lsn)));
  }

  @Test
  void aRetryOfAPendingRequestForcesAMarkerAgainAndARetryOfAProcessedOneForcesNone() {
    app.api.checkpointRequest(token, "c1", "7");
    assertEquals(1, markers());
    app.api.checkpointRequest(token, "c1", "7");
    assertEquals(2, markers(), "equal retry of a pending request: the lost marker is forced again");
    app.api.checkpointRequest(token, "c1", "5");
    assertEquals(3, markers(), "stale retry of a pending request forces it too");

    try (StreamClient stream = StreamClient.syncStream(vertx, app.port(), token, "c1")) {
      stream.next();
      stream.next();
      publishCurrentPosition();
      assertEquals("7", stream.nextMatching(l -> l.containsKey("checkpoint_diff"))
          .getJsonObject("checkpoint_diff").getString("write_checkpoint"));
    }
    awaitRecorded("c1", "7");
    app.api.checkpointRequest(token, "c1", "7");
    app.api.checkpointRequest(token, "c1", "5");
    assertEquals(3, markers(), "retries of a processed request force no marker");
  }

  @Test
  void progressFromAnotherVerticleAcknowledgesOnlyCheckpointsAtOrBeforeIt() {
    requestAndAwaitAcknowledgement("early", "1");
    // Stored after the published position was applied, and no later position comes: it waits.
    app.api.checkpointRequest(token, "late", "1");
    assertEquals(1, app.sql.count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE processed_at_lsn IS NULL AND user_id = 'u1' AND client_id = 'late'"));
    assertEquals(0, app.sql.count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE processed_at_lsn IS NULL AND user_id = 'u1' AND client_id = 'early'"));
  }

  @Test
  void aStreamOpenedWhileALaterCheckpointIsPendingShowsTheOneAcknowledgedBefore() {
    requestAndAwaitAcknowledgement("c1", "5");
    // No position comes after this one: 6 stays pending, and 5 was acknowledged before it.
    app.api.checkpointRequest(token, "c1", "6");
    try (StreamClient reconnected = StreamClient.syncStream(vertx, app.port(), token, "c1")) {
      assertEquals("5", reconnected.next().getJsonObject("checkpoint").getString("write_checkpoint"));
    }
  }

  /**
   * Requests {@code id}, publishes the source's current position, hears {@code id} acknowledged on a
   * stream, and waits until storage has recorded it.
   */
  private void requestAndAwaitAcknowledgement(String clientId, String id) {
    app.api.checkpointRequest(token, clientId, id);
    try (StreamClient stream = StreamClient.syncStream(vertx, app.port(), token, clientId)) {
      stream.next();
      stream.next();
      publishCurrentPosition();
      assertEquals(id, stream.nextMatching(l -> l.containsKey("checkpoint_diff"))
          .getJsonObject("checkpoint_diff").getString("write_checkpoint"));
    }
    awaitRecorded(clientId, id);
  }

  /** Streams may be told before storage records an acknowledgement; consumers of the event bus are told after. */
  private void awaitRecorded(String clientId, String id) {
    try {
      String heard;
      do {
        heard = recorded.poll(20, TimeUnit.SECONDS);
        assertNotNull(heard, clientId + "/" + id + " was never recorded");
      } while (!heard.equals(clientId + "/" + id));
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }
}
