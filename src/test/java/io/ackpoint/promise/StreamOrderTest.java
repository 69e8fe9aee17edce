package io.ackpoint.promise;

import io.ackpoint.support.AckpointExtension;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Instant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Per stream, write_checkpoint never decreases; a stream that ends at token expiry says so first. */
@ExtendWith(VertxExtension.class)
class StreamOrderTest {

  @RegisterExtension
  final AckpointExtension app = AckpointExtension.with(c -> TestAckpoint.withFollower(c)
      .put("streams", new JsonObject().put("keepalive_interval", "1s")));

  private static long writeCheckpoint(JsonObject line) {
    JsonObject body = line.containsKey("checkpoint_diff") ? line.getJsonObject("checkpoint_diff") : line.getJsonObject("checkpoint");
    return Long.parseLong(body.getString("write_checkpoint"));
  }

  @Test
  void duplicateRowsOfAnOlderInstallNeverMakeAStreamGoBackwards() {
    String token = TestKeys.token("dup");
    app.api().checkpointRequest(token, "c", "1");
    try (StreamClient stream = StreamClient.syncStream(app.vertx(), app.port(), token, "c")) {
      stream.next();
      stream.next();
      // An older install without the unique index, holding two pending rows of one user: 9, then 4.
      app.sql().query("DROP INDEX IF EXISTS ackpoint_write_checkpoints_user_id_key");
      app.sql().query("DROP INDEX IF EXISTS ackpoint_write_checkpoints_user_client_key");
      app.sql().query("CREATE TEMP TABLE dup AS SELECT * FROM ackpoint_write_checkpoints");
      app.sql().query("UPDATE dup SET id = nextval('ackpoint_write_checkpoints_id_seq'), write_checkpoint = 4");
      app.sql().query("UPDATE ackpoint_write_checkpoints SET write_checkpoint = 9");
      app.sql().query("INSERT INTO ackpoint_write_checkpoints SELECT * FROM dup");
      app.sql().query("UPDATE ackpoint_write_checkpoints SET processed_at_lsn = NULL,"
          + " lsns = jsonb_build_object('1', '00000000/00000001')");
      // Rows made pending behind storage's back are not in the pending queue: empty it as a crash
      // would (its proof of completeness included), so the next acknowledgement rebuilds it.
      app.sql().query("TRUNCATE ackpoint_pending");
      // Another user's request forces a marker; its position acknowledges both rows at once.
      app.api().checkpointRequest(TestKeys.token("other"), "c", "1");
      long highest = 0;
      long seen;
      do {
        seen = writeCheckpoint(stream.nextMatching(l -> l.containsKey("checkpoint_diff")));
        assertTrue(seen > highest, "went from " + highest + " to " + seen);
        highest = seen;
        if (seen == 9) {
          app.api().checkpointRequest(token, "c", "10");
        }
      } while (seen < 10);
    }
  }

  @Test
  void aStreamEndingAtTokenExpiryFirstTellsTheClientItsTokenExpiredOnce() {
    long now = Instant.now().getEpochSecond();
    String shortLived = TestKeys.sign(app.vertx(), TestKeys.KID, TestKeys.SECRET, TestKeys.claims("brief").put("exp", now + 3));
    try (StreamClient stream = StreamClient.syncStream(app.vertx(), app.port(), shortLived, "c")) {
      stream.next();
      stream.next();
      // A keepalive every second: the one in the token's last second still counts it as left.
      JsonObject last = stream.nextMatching(l -> l.containsKey("token_expires_in"));
      while (last.getInteger("token_expires_in") > 0) {
        last = stream.nextMatching(l -> l.containsKey("token_expires_in"));
      }
      assertEquals(0, last.getInteger("token_expires_in"));
      stream.awaitEnd();
      assertEquals(0, stream.buffered(), "nothing after the 0, which is said once, at expiry");
    }
  }
}
