package io.ackpoint.http;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/** How an acknowledgement stream is written: the PowerSync protocol (NDJSON) or server-sent events. */
sealed interface StreamFormat {

  String contentType();

  /** The opening lines; {@code writeCheckpoint} is null when nothing is acknowledged yet. */
  String first(String checkpoint, Long writeCheckpoint);

  String acknowledged(String checkpoint, long writeCheckpoint);

  String keepalive(long secondsLeft);

  /** SPEC section 5: {@code checkpoint} / {@code checkpoint_diff}, each followed by {@code checkpoint_complete}. */
  record PowerSync() implements StreamFormat {

    @Override
    public String contentType() {
      return "application/x-ndjson";
    }

    @Override
    public String first(String checkpoint, Long writeCheckpoint) {
      JsonObject body = new JsonObject().put("last_op_id", checkpoint);
      if (writeCheckpoint != null) {
        body.put("write_checkpoint", Long.toString(writeCheckpoint));
      }
      body.put("buckets", new JsonArray());
      return line(new JsonObject().put("checkpoint", body)) + complete(checkpoint);
    }

    /**
     * Written to every stream of a position's users, thousands at once: formatted without a JSON
     * encoder, which is safe because {@code checkpoint} is a decimal sequence Ackpoint formats itself
     * and ids are numbers (nothing to escape). The same text as encoding the JSON objects.
     */
    @Override
    public String acknowledged(String checkpoint, long writeCheckpoint) {
      return "{\"checkpoint_diff\":{\"last_op_id\":\"" + checkpoint + "\",\"write_checkpoint\":\"" + writeCheckpoint
          + "\",\"updated_buckets\":[],\"removed_buckets\":[]}}\n"
          + "{\"checkpoint_complete\":{\"last_op_id\":\"" + checkpoint + "\"}}\n";
    }

    /**
     * PowerSync clients read {@code token_expires_in} as a 32-bit signed integer: a token valid for
     * more than 68 years more is reported as that long, which such a client treats like any other
     * distant expiry (a greater number is a protocol error there, and the client reconnects).
     */
    @Override
    public String keepalive(long secondsLeft) {
      return line(new JsonObject().put("token_expires_in", Math.min(secondsLeft, Integer.MAX_VALUE)));
    }

    private static String complete(String checkpoint) {
      return line(new JsonObject().put("checkpoint_complete", new JsonObject().put("last_op_id", checkpoint)));
    }

    private static String line(JsonObject json) {
      return json.encode() + "\n";
    }
  }

  /** For clients that do not speak PowerSync: {@code event: checkpoint} with the acknowledged id. */
  record ServerSentEvents() implements StreamFormat {

    @Override
    public String contentType() {
      return "text/event-stream";
    }

    @Override
    public String first(String checkpoint, Long writeCheckpoint) {
      JsonObject data = new JsonObject().put("checkpoint", checkpoint);
      if (writeCheckpoint != null) {
        data.put("write_checkpoint", Long.toString(writeCheckpoint));
      }
      return "event: checkpoint\ndata: " + data.encode() + "\n\n";
    }

    @Override
    public String acknowledged(String checkpoint, long writeCheckpoint) {
      return first(checkpoint, writeCheckpoint);
    }

    @Override
    public String keepalive(long secondsLeft) {
      return ": token_expires_in " + secondsLeft + "\n\n";
    }
  }
}
