package io.ackpoint.source;

import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandSucceededEvent;
import io.vertx.core.json.JsonObject;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What the follower learns from the replies to its change stream's commands, which the Vert.x
 * client's streams do not hand out: whether the stream opened, and each batch's post-batch resume
 * token, the point up to which the server has scanned the oplog even when no event matched (an idle
 * stream, or one whose writes are all elsewhere). Installed on the follower's own client, which runs
 * nothing else of the kind. Called on the driver's threads: it only hands over.
 */
final class StreamReplies implements CommandListener {

  /** Receives what the replies told, on whichever thread the driver calls from. */
  interface Receiver {

    /** The stream's {@code aggregate} succeeded; {@code open} is false when the server closed its cursor at once. */
    void opened(boolean open);

    /** A batch's post-batch resume token (real MongoDB 4.0.7 and later; the test server sends none). */
    void scanned(JsonObject token);
  }

  private final Receiver receiver;

  StreamReplies(Receiver receiver) {
    this.receiver = receiver;
  }

  @Override
  public void commandSucceeded(CommandSucceededEvent event) {
    String command = event.getCommandName();
    if (!"aggregate".equals(command) && !"getMore".equals(command)) {
      return;
    }
    BsonDocument cursor = event.getResponse().getDocument("cursor", null);
    if (cursor == null) {
      return;
    }
    if ("aggregate".equals(command)) {
      BsonValue id = cursor.get("id");
      receiver.opened(id != null && id.isNumber() && id.asNumber().longValue() != 0);
    }
    BsonValue token = cursor.get("postBatchResumeToken");
    if (token != null && token.isDocument()) {
      receiver.scanned(new JsonObject(token.asDocument().toJson()));
    }
  }
}
