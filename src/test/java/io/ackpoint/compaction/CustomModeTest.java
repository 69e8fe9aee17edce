package io.ackpoint.compaction;

import io.ackpoint.support.ApiClient;
import io.ackpoint.support.AckpointExtension;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Custom checkpoint mode: the application writes its own ids into a source table. */
@ExtendWith(VertxExtension.class)
class CustomModeTest {

  @RegisterExtension
  final AckpointExtension app = AckpointExtension.with(c -> TestAckpoint.withFollower(c)
          .put("checkpoints", new JsonObject().put("mode", "custom"))
          .put("custom", new JsonObject().put("request_column", "is_request")))
      // Updates are replicated, so the table needs a replica identity: here its primary key.
      .preparing(setup -> setup.query("CREATE TABLE checkpoints (id BIGSERIAL PRIMARY KEY, user_id TEXT NOT NULL,"
          + " checkpoint BIGINT NOT NULL, client_id TEXT, is_request BOOLEAN)"));
  private final String token = TestKeys.token("app-user");

  private static String acknowledged(JsonObject line) {
    JsonObject body = line.containsKey("checkpoint_diff") ? line.getJsonObject("checkpoint_diff") : line.getJsonObject("checkpoint");
    return body == null ? null : body.getString("write_checkpoint");
  }

  @Test
  void aCustomCheckpointWrittenIntoTheSourceTableIsAcknowledgedOnTheStream() {
    try (StreamClient stream = StreamClient.syncStream(app.vertx(), app.port(), token, "c1")) {
      stream.next();
      stream.next();
      app.sql().query("INSERT INTO checkpoints (user_id, checkpoint, client_id) VALUES ('app-user', 41, 'c1'), ('someone-else', 99, 'c1')");
      assertEquals("41", acknowledged(stream.nextMatching(l -> l.containsKey("checkpoint_diff"))));
      app.sql().query("UPDATE checkpoints SET checkpoint = 42 WHERE user_id = 'app-user'");
      assertEquals("42", acknowledged(stream.nextMatching(l -> l.containsKey("checkpoint_diff"))));
    }
    assertNull(app.sql().query("SELECT checkpoint_requested_at FROM ackpoint_write_checkpoints WHERE user_id = 'app-user' AND client_id = 'c1'")
        .iterator().next().getValue(0), "a persistent custom checkpoint is never compacted");
  }

  @Test
  void anUpdateLeavingAUserIdStoredOutOfLineUnchangedIsFollowedWithAFullReplicaIdentity() {
    // A long user id in a wide row is stored out of line (TOAST); an update that leaves it alone
    // replicates it as "unchanged", without its value, which only the full old row then carries.
    String user = "long-" + "x".repeat(1000);
    app.sql().query("ALTER TABLE checkpoints REPLICA IDENTITY FULL");
    app.sql().query("ALTER TABLE checkpoints ALTER COLUMN user_id SET STORAGE EXTERNAL");
    app.sql().query("ALTER TABLE checkpoints ADD COLUMN note TEXT");
    app.sql().query("ALTER TABLE checkpoints ALTER COLUMN note SET STORAGE PLAIN");
    String longToken = TestKeys.token(user);
    try (StreamClient stream = StreamClient.syncStream(app.vertx(), app.port(), longToken, "c1")) {
      stream.next();
      stream.next();
      app.sql().query("INSERT INTO checkpoints (user_id, checkpoint, client_id, note) VALUES ('" + user + "', 41, 'c1', repeat('n', 1500))");
      assertEquals("41", acknowledged(stream.nextMatching(l -> l.containsKey("checkpoint_diff"))));
      app.sql().query("UPDATE checkpoints SET checkpoint = 42 WHERE client_id = 'c1'");
      assertEquals("42", acknowledged(stream.nextMatching(l -> l.containsKey("checkpoint_diff"))));
    }
  }

  @Test
  void anUpdateLeavingAClientIdStoredOutOfLineUnchangedIsNeverCreditedToAnotherUser() {
    // Without REPLICA IDENTITY FULL nothing carries the client id the update left out: the row is
    // skipped, never taken for the user without a client.
    String client = "k".repeat(256);
    app.sql().query("ALTER TABLE checkpoints ALTER COLUMN client_id SET STORAGE EXTERNAL");
    app.sql().query("ALTER TABLE checkpoints ADD COLUMN note TEXT");
    app.sql().query("ALTER TABLE checkpoints ALTER COLUMN note SET STORAGE PLAIN");
    app.sql().query("ALTER TABLE checkpoints ALTER COLUMN user_id SET STORAGE PLAIN");
    String user = "wide-" + "u".repeat(1000);
    String wideToken = TestKeys.token(user);
    try (StreamClient noClient = StreamClient.syncStream(app.vertx(), app.port(), wideToken, null)) {
      noClient.next();
      noClient.next();
      app.sql().query("INSERT INTO checkpoints (user_id, checkpoint, client_id, note) VALUES ('" + user + "', 70, '" + client
          + "', repeat('n', 1500))");
      app.sql().query("UPDATE checkpoints SET checkpoint = 71 WHERE checkpoint = 70");
      app.sql().query("INSERT INTO checkpoints (user_id, checkpoint) VALUES ('" + user + "', 5)");
      assertEquals("5", acknowledged(noClient.nextMatching(l -> l.containsKey("checkpoint_diff"))));
    }
  }

  @Test
  void requestFlaggedRowsAreTemporary() {
    try (StreamClient stream = StreamClient.syncStream(app.vertx(), app.port(), token, "c2")) {
      stream.next();
      stream.next();
      app.sql().query("INSERT INTO checkpoints (user_id, checkpoint, client_id, is_request) VALUES ('app-user', 7, 'c2', true)");
      assertEquals("7", acknowledged(stream.nextMatching(l -> l.containsKey("checkpoint_diff"))));
    }
    assertNotNull(app.sql().query("SELECT checkpoint_requested_at FROM ackpoint_write_checkpoints WHERE user_id = 'app-user' AND client_id = 'c2'")
        .iterator().next().getValue(0));
  }

  @Test
  void theGeneratedIdRoutesRefuseWithAClearError() {
    ApiClient api = new ApiClient(app.vertx(), app.port());
    var generated = app.api().writeCheckpoint2(token, "c1");
    assertEquals(409, generated.statusCode());
    assertEquals("ACK_CUSTOM_CHECKPOINT_MODE", ApiClient.errorCode(generated));
    assertEquals(409, app.api().checkpointRequest(token, "c1", "5").statusCode());
    assertEquals(0, app.sql().checkpointRows());
  }
}
