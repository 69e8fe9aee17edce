package io.ackpoint.core;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/**
 * Replication passed {@code position}, the streams' checkpoint sequence {@code checkpoint}, and with
 * it the checkpoints of {@code reached} (one per user: its greatest id). One message per applied
 * position, to every node, however many users it carries; each node tells its own streams, waiters
 * and event-bus consumers. {@code previous} is the position its engine announced before this one,
 * empty for an engine's first: a node that has not heard {@code previous} missed an announcement
 * and reads it back from storage.
 */
public record PositionReached(String position, long checkpoint, List<Reached> reached, String previous) {

  /**
   * Marks a release ahead of storage (see {@code io.ackpoint.ack.EarlyReleases}): its users are told
   * to streams and waiters, not yet to event-bus consumers, and it is no announcement of an applied
   * position. Between nodes a position thus travels at most twice, each time with all its users.
   */
  public static final String RELEASE_HEADER = "ackpoint-released";

  public PositionReached {
    reached = List.copyOf(reached);
    previous = previous == null ? "" : previous;
  }

  public JsonObject toJson() {
    JsonArray users = new JsonArray();
    for (Reached r : reached) {
      users.add(new JsonArray().add(r.user().userId()).add(r.user().clientId()).add(r.writeCheckpoint()));
    }
    return new JsonObject().put("position", position).put("checkpoint", checkpoint).put("reached", users)
        .put("previous", previous);
  }

  public static PositionReached fromJson(JsonObject json) {
    JsonArray users = json.getJsonArray("reached");
    List<Reached> reached = new ArrayList<>(users.size());
    for (int i = 0; i < users.size(); i++) {
      JsonArray user = users.getJsonArray(i);
      reached.add(new Reached(new FullUserId(user.getString(0), user.getString(1)), user.getLong(2)));
    }
    return new PositionReached(json.getString("position"), json.getLong("checkpoint"), reached, json.getString("previous"));
  }
}
