package io.ackpoint;

import io.ackpoint.core.FullUserId;
import io.vertx.core.json.JsonObject;

/**
 * The body of {@code ackpoint.checkpoint.reached}: replication passed {@code writeCheckpoint} of
 * {@code user} at {@code position}, the stream's checkpoint sequence being {@code checkpoint}. On the
 * bus: {@code {"user_id","client_id"?,"write_checkpoint","position","checkpoint"}}, ids as strings,
 * {@code client_id} absent for a user without one.
 */
public record CheckpointReached(FullUserId user, long writeCheckpoint, String position, long checkpoint) {

  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("user_id", user.userId());
    if (user.hasClientId()) {
      json.put("client_id", user.clientId());
    }
    return json.put("write_checkpoint", Long.toString(writeCheckpoint))
        .put("position", position)
        .put("checkpoint", Long.toString(checkpoint));
  }

  /** The event in {@code json}, or {@code null} when it is not one (anyone may publish on the address). */
  public static CheckpointReached fromJson(Object body) {
    try {
      JsonObject json = (JsonObject) body;
      return new CheckpointReached(new FullUserId(json.getString("user_id"), json.getString("client_id")),
          Long.parseLong(json.getString("write_checkpoint")), json.getString("position"),
          Long.parseLong(json.getString("checkpoint")));
    } catch (RuntimeException e) {
      return null;
    }
  }
}
