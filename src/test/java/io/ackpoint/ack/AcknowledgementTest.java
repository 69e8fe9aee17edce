package io.ackpoint.ack;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.core.PositionReached;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.AckpointExtension;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static io.ackpoint.support.ApiClient.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SPEC sections 4 and 5, end to end: the built-in follower on a real PostgreSQL, real HTTP streams. */
@ExtendWith(VertxExtension.class)
class AcknowledgementTest {

  @RegisterExtension
  final AckpointExtension app = AckpointExtension.with(TestAckpoint::withFollower);
  private final String u1 = TestKeys.token("u1");

  private StreamClient stream(String token, String clientId) {
    return app.stream(token, clientId);
  }

  private static boolean acknowledges(JsonObject line, String id) {
    JsonObject body = line.containsKey("checkpoint_diff") ? line.getJsonObject("checkpoint_diff") : line.getJsonObject("checkpoint");
    return body != null && id.equals(body.getString("write_checkpoint"));
  }

  @Test
  void aStreamOpensWithACheckpointThenCheckpointComplete() {
    try (StreamClient stream = stream(u1, "c1")) {
      assertEquals(200, stream.status());
      assertTrue(stream.contentType().startsWith("application/x-ndjson"));
      assertEquals("no", stream.header("X-Accel-Buffering"), "a buffering proxy passes each line on at once");
      JsonObject first = stream.next().getJsonObject("checkpoint");
      assertTrue(first.getString("last_op_id").matches("\\d+"), first.encode());
      assertNull(first.getValue("write_checkpoint"), "nothing acknowledged yet");
      assertEquals(0, first.getJsonArray("buckets").size());
      assertEquals(first.getString("last_op_id"), stream.next().getJsonObject("checkpoint_complete").getString("last_op_id"));
    }
  }

  @Test
  void aRequestOnAnIdleSourceIsAcknowledgedOnAnOpenStream() throws InterruptedException {
    BlockingQueue<String> applied = new LinkedBlockingQueue<>();
    Await.result(app.vertx().eventBus().<PositionReached>consumer(new AckpointAddresses(AckpointAddresses.DEFAULT_PREFIX).positionReached(),
        msg -> applied.add(msg.body().position())).completion());
    try (StreamClient stream = stream(u1, "c1")) {
      stream.next();
      stream.next();
      assertEquals("7", data(app.api().checkpointRequest(u1, "c1", "7")).getString("checkpoint_request_id"));
      JsonObject diff = stream.nextMatching(line -> line.containsKey("checkpoint_diff")).getJsonObject("checkpoint_diff");
      assertEquals("7", diff.getString("write_checkpoint"));
      assertEquals(0, diff.getJsonArray("updated_buckets").size());
      assertEquals(0, diff.getJsonArray("removed_buckets").size());
      assertEquals(diff.getString("last_op_id"), stream.next().getJsonObject("checkpoint_complete").getString("last_op_id"));
    }
    // The line may come from a position before the batch's own marker (the follower's start-up or
    // heartbeat marker, written between the batch's head and its marker): the latency is recorded
    // when a position at or past the marker is applied, just before that position is announced.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!app.metrics().contains("ackpoint_acknowledgement_latency_seconds_count 1\n")) {
      assertTrue(System.nanoTime() < deadline && applied.poll(10, TimeUnit.SECONDS) != null,
          "the stored → reached latency of the batch was recorded once");
    }
  }

  /**
   * The engine tells its own node's event loops directly, and the node's acknowledgement verticle
   * passes on only what other nodes announce: no announcement reaches the event loops twice. Within
   * a node a position travels as one record, so a second delivery is the same instance again.
   */
  @Test
  void theEventLoopsOfTheEnginesNodeHearEachOfItsAnnouncementsOnce() {
    // First an acknowledgement of another user: the engine's first announcement has the node read
    // back what it missed, and a read-back is told to the event loops as a record of its own.
    acknowledgedOnAStream(TestKeys.token("before"));
    AckpointAddresses addresses = new AckpointAddresses(AckpointAddresses.DEFAULT_PREFIX);
    Queue<PositionReached> heard = new ConcurrentLinkedQueue<>();
    Await.result(app.vertx().eventBus().<PositionReached>localConsumer(addresses.positionHeard(), msg -> heard.add(msg.body()))
        .completion());
    acknowledgedOnAStream(u1);
    acknowledgedOnAStream(TestKeys.token("after"));
    Set<PositionReached> distinct = Collections.newSetFromMap(new IdentityHashMap<>());
    distinct.addAll(heard);
    assertEquals(heard.size(), distinct.size(), "an announcement reached the event loops twice: " + heard);
    assertTrue(heard.stream().anyMatch(p -> p.reached().stream().anyMatch(r -> r.user().userId().equals("u1"))),
        "the event loops heard the user's acknowledgement");
  }

  private void acknowledgedOnAStream(String token) {
    try (StreamClient stream = stream(token, "c1")) {
      stream.next();
      stream.next();
      assertEquals("3", data(app.api().checkpointRequest(token, "c1", "3")).getString("checkpoint_request_id"));
      stream.nextMatching(line -> acknowledges(line, "3"));
    }
  }

  @Test
  void aGeneratedCheckpointIsAcknowledgedOnAnOpenStream() {
    try (StreamClient stream = stream(u1, "c1")) {
      stream.next();
      stream.next();
      assertEquals("1", data(app.api().writeCheckpoint2(u1, "c1")).getString("write_checkpoint"));
      assertTrue(acknowledges(stream.nextMatching(line -> line.containsKey("checkpoint_diff")), "1"));
    }
  }

  @Test
  void aRequestMadeBeforeTheStreamOpensShowsInTheFirstCheckpointLine() {
    HttpResponse<Buffer> acknowledged = app.api().checkpointRequestAwaiting(u1, "{\"client_id\":\"c1\",\"checkpoint_request_id\":\"7\"}", 10);
    assertEquals(true, data(acknowledged).getBoolean("acknowledged"));
    try (StreamClient stream = stream(u1, "c1")) {
      assertTrue(acknowledges(stream.next(), "7"));
      assertTrue(stream.next().containsKey("checkpoint_complete"));
    }
  }

  @Test
  void twoUsersNeverSeeEachOthersAcknowledgements() {
    String u2 = TestKeys.token("u2");
    try (StreamClient first = stream(u1, "c1"); StreamClient second = stream(u2, "c1")) {
      first.next();
      first.next();
      second.next();
      second.next();
      app.api().checkpointRequest(u2, "c1", "50");
      assertTrue(acknowledges(second.nextMatching(line -> line.containsKey("checkpoint_diff")), "50"));
      app.api().checkpointRequest(u1, "c1", "3");
      // The next acknowledgement u1 sees is its own, not u2's 50.
      assertTrue(acknowledges(first.nextMatching(line -> line.containsKey("checkpoint_diff")), "3"));
    }
  }

  @Test
  void aCheckpointRequestCanWaitForItsOwnAcknowledgement() throws InterruptedException {
    BlockingQueue<JsonObject> recorded = new LinkedBlockingQueue<>();
    Await.result(app.vertx().eventBus().<JsonObject>consumer(new AckpointAddresses(AckpointAddresses.DEFAULT_PREFIX).checkpointReached(),
        msg -> recorded.add(msg.body())).completion());
    JsonObject answer = data(app.api().checkpointRequestAwaiting(u1, "{\"client_id\":\"c1\",\"checkpoint_request_id\":\"4\"}", 10));
    assertEquals("4", answer.getString("checkpoint_request_id"));
    assertEquals(true, answer.getBoolean("acknowledged"));
    assertTrue(answer.getString("checkpoint").matches("\\d+"));
    // The answer may come as soon as replication passes the checkpoint, a moment before storage records it.
    JsonObject heard = recorded.poll(20, TimeUnit.SECONDS);
    assertEquals("4", heard == null ? null : heard.getString("write_checkpoint"));
    // A retry of an already acknowledged id is acknowledged at once, from storage.
    assertEquals(true, data(app.api().checkpointRequestAwaiting(u1, "{\"client_id\":\"c1\",\"checkpoint_request_id\":\"4\"}", 10)).getBoolean("acknowledged"));
    assertEquals(1, app.sql().count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE processed_at_lsn IS NOT NULL"));
  }

  @Test
  void aWaitBeyondTheLimitIs400() {
    HttpResponse<Buffer> response = app.api().checkpointRequestAwaiting(u1, "{\"client_id\":\"c1\",\"checkpoint_request_id\":\"4\"}", 3600);
    assertEquals(400, response.statusCode());
    assertEquals(0, app.sql().checkpointRows());
  }

  @Test
  void theLegacyRouteAnswersOnceReplicationPassedItsHead() {
    HttpResponse<Buffer> response = ApiClient.send(app.api().request(HttpMethod.GET, "/write-checkpoint.json")
        .putHeader("Authorization", "Token " + u1), null);
    assertEquals(200, response.statusCode(), response.bodyAsString());
    assertTrue(data(response).getString("checkpoint").matches("\\d+"));
  }

  @Test
  void serverSentEventsCarryTheAcknowledgementsOfOneUser() {
    try (StreamClient events = StreamClient.serverSentEvents(app.vertx(), app.port(), u1, "web")) {
      assertTrue(events.contentType().startsWith("text/event-stream"));
      assertEquals("no", events.header("X-Accel-Buffering"));
      assertEquals("event: checkpoint", events.nextLine());
      assertFalse(new JsonObject(events.nextLine().substring("data: ".length())).containsKey("write_checkpoint"));
      assertEquals("", events.nextLine());
      app.api().checkpointRequest(u1, "web", "12");
      assertEquals("event: checkpoint", events.nextLine());
      assertEquals("12", new JsonObject(events.nextLine().substring("data: ".length())).getString("write_checkpoint"));
    }
  }

  @Test
  void theFollowerSurvivesADroppedReplicationConnection() {
    String slot = TestAckpoint.slotOf(app.config());
    // Wait until the follower holds its slot, then cut its connection from the server side.
    try (StreamClient stream = stream(u1, "c1")) {
      stream.next();
      stream.next();
      app.api().checkpointRequest(u1, "c1", "1");
      assertTrue(acknowledges(stream.nextMatching(line -> line.containsKey("checkpoint_diff")), "1"));
      assertEquals(1, app.sql().count("SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1 AND active", slot));
      assertEquals(1, app.sql().count("SELECT count(pg_terminate_backend(active_pid)) FROM pg_replication_slots WHERE slot_name = $1", slot));
      app.api().checkpointRequest(u1, "c1", "2");
      assertTrue(acknowledges(stream.nextMatching(line -> line.containsKey("checkpoint_diff")), "2"));
    }
  }
  /**
   * The slot decodes each change with the catalog of its time: one written while the publication did
   * not exist fails every time, though the follower creates the publication again at each connect.
   * With generated checkpoints the slot is created again at the present, and the marker after it
   * acknowledges what is pending.
   */
  @Test
  void theFollowerSurvivesItsPublicationDroppedUnderIt() {
    try (StreamClient stream = stream(u1, "c1")) {
      stream.next();
      stream.next();
      app.api().checkpointRequest(u1, "c1", "1");
      assertTrue(acknowledges(stream.nextMatching(line -> line.containsKey("checkpoint_diff")), "1"));
      app.sql().query("DROP PUBLICATION ackpoint");
      // Its row is a change written while the publication does not exist.
      app.api().checkpointRequest(u1, "c1", "2");
      assertTrue(acknowledges(stream.nextMatching(line -> line.containsKey("checkpoint_diff")), "2"));
    }
  }
}
