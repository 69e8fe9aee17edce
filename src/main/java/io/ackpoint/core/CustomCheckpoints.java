package io.ackpoint.core;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** The event-bus form of custom checkpoints committed at one position. */
public final class CustomCheckpoints {

  /**
   * Users stored per statement: one statement for a bulk transaction could outlast the statement
   * timeout, be cancelled, and be sent again by the slot for ever. It is also the unit that
   * {@code custom.store_timeout} bounds.
   */
  public static final int PER_STATEMENT = 5_000;

  private CustomCheckpoints() {
  }

  public static JsonObject toJson(String position, List<CustomCheckpoint> checkpoints) {
    JsonArray rows = new JsonArray();
    for (CustomCheckpoint c : checkpoints) {
      rows.add(new JsonObject().put("user_id", c.user().userId()).put("client_id", c.user().clientId())
          .put("checkpoint", Long.toString(c.checkpoint())).put("request", c.request()));
    }
    return new JsonObject().put("position", position).put("checkpoints", rows);
  }

  public static List<CustomCheckpoint> checkpoints(JsonObject json) {
    List<CustomCheckpoint> out = new ArrayList<>();
    for (Object o : json.getJsonArray("checkpoints")) {
      JsonObject row = (JsonObject) o;
      out.add(new CustomCheckpoint(new FullUserId(row.getString("user_id"), row.getString("client_id")),
          Long.parseLong(row.getString("checkpoint")), row.getBoolean("request")));
    }
    return out;
  }

  /**
   * One checkpoint per full user id, as storage keeps them: of the checkpoints of one transaction,
   * the greatest id wins, with its request flag; of equal ones, the later row's flag.
   */
  public static Collection<CustomCheckpoint> latestPerUser(List<CustomCheckpoint> checkpoints) {
    Map<FullUserId, CustomCheckpoint> latest = new LinkedHashMap<>();
    for (CustomCheckpoint c : checkpoints) {
      latest.merge(c.user(), c, (a, b) -> b.checkpoint() >= a.checkpoint() ? b : a);
    }
    return latest.values();
  }

  /**
   * Stores the latest checkpoint per user of one transaction ({@link #latestPerUser}) by
   * {@code store}, at most {@code perChunk} users at a time, each chunk once the one before it is
   * stored; fails with the first chunk that fails. Chunks are idempotent (a greater id raises, an
   * equal one refreshes), so those stored before a failure are stored again harmlessly when the
   * slot sends the transaction again.
   */
  public static Future<Void> storeInChunks(List<CustomCheckpoint> checkpoints, int perChunk,
                                           Function<List<CustomCheckpoint>, Future<Void>> store) {
    List<CustomCheckpoint> latest = new ArrayList<>(latestPerUser(checkpoints));
    Future<Void> stored = Future.succeededFuture();
    for (int from = 0; from < latest.size(); from += perChunk) {
      List<CustomCheckpoint> chunk = latest.subList(from, Math.min(latest.size(), from + perChunk));
      stored = stored.compose(previous -> store.apply(chunk));
    }
    return stored;
  }
}
