package io.ackpoint.source;

import com.mongodb.ServerAddress;
import com.mongodb.connection.ClusterId;
import com.mongodb.connection.ConnectionDescription;
import com.mongodb.connection.ServerId;
import com.mongodb.event.CommandSucceededEvent;
import io.vertx.core.json.JsonObject;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The replies of a real replica set, which the test server does not send (post-batch resume tokens),
 * reach the follower: recorded reply shapes fed to the listener as the driver would.
 */
class StreamRepliesTest {

  private final List<String> told = new ArrayList<>();
  private final StreamReplies replies = new StreamReplies(new StreamReplies.Receiver() {
    @Override
    public void opened(boolean open) {
      told.add("opened " + open);
    }

    @Override
    public void scanned(JsonObject token) {
      told.add("scanned " + ClusterTime.fromResumeToken(token));
    }
  });

  private void reply(String command, String response) {
    ConnectionDescription connection = new ConnectionDescription(new ServerId(new ClusterId(), new ServerAddress()));
    replies.commandSucceeded(new CommandSucceededEvent(null, 1, 1, connection, "app", command, BsonDocument.parse(response), 1));
  }

  @Test
  void theOpeningAndEveryBatchTellTheirPostBatchResumeToken() {
    reply("aggregate", "{cursor: {id: NumberLong(42), ns: 'app._ackpoint_checkpoints', firstBatch: [],"
        + " postBatchResumeToken: {_data: '8265A1B2C3000000012B0229296E04'}}, ok: 1.0}");
    reply("getMore", "{cursor: {id: NumberLong(42), ns: 'app._ackpoint_checkpoints', nextBatch: [],"
        + " postBatchResumeToken: {_data: '8265A1B2CD000000042B0229296E04'}}, ok: 1.0}");
    assertEquals(List.of("opened true", "scanned " + ClusterTime.of(0x65A1B2C3L, 1), "scanned " + ClusterTime.of(0x65A1B2CDL, 4)), told);
  }

  @Test
  void aCursorClosedAtOnceIsNoStreamAndOtherCommandsAreNotLookedAt() {
    reply("aggregate", "{cursor: {id: NumberLong(0), ns: 'app._ackpoint_checkpoints', firstBatch: []}, ok: 1.0}");
    reply("find", "{cursor: {id: NumberLong(0), ns: 'app._ackpoint_followers', firstBatch: [],"
        + " postBatchResumeToken: {_data: '8265A1B2C3000000012B0229296E04'}}, ok: 1.0}");
    reply("update", "{n: 1, ok: 1.0}");
    assertEquals(List.of("opened false"), told);
  }
}
