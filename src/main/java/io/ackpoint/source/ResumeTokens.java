package io.ackpoint.source;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.mongo.MongoClient;
import io.vertx.ext.mongo.UpdateOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;

/**
 * Where the change-stream follower keeps its resume token between runs, as PostgreSQL keeps a slot's
 * position: one document per follower name ({@code replication.slot_name}) in {@value #COLLECTION}
 * of the source database. That collection is not the watched one, so saving makes no event.
 */
final class ResumeTokens {

  static final String COLLECTION = "_ackpoint_followers";
  private static final Logger LOG = LoggerFactory.getLogger(ResumeTokens.class);

  private final MongoClient client;
  private final String name;

  ResumeTokens(MongoClient client, String name) {
    this.client = client;
    this.name = name;
  }

  /**
   * The saved token, or {@code null} when this follower has never saved one, or what is saved is no
   * token (a document edited by hand): starting from the present loses nothing, since the marker
   * forced as the stream opens passes every checkpoint stored before it.
   */
  Future<JsonObject> load() {
    return client.findOne(COLLECTION, new JsonObject().put("_id", name), null).map(doc -> {
      Object token = doc == null ? null : doc.getValue("resume_token");
      if (token == null || token instanceof JsonObject) {
        return (JsonObject) token;
      }
      LOG.warn("the saved resume token of {} is not a document ({}): following from the present", name, token);
      return null;
    });
  }

  Future<Void> save(JsonObject token, String position) {
    JsonObject state = new JsonObject().put("resume_token", token).put("position", position)
        .put("saved_at", new JsonObject().put("$date", Instant.now().toString()));
    return client.updateCollectionWithOptions(COLLECTION, new JsonObject().put("_id", name),
        new JsonObject().put("$set", state), new UpdateOptions().setUpsert(true)).mapEmpty();
  }

  /** Forgets the token: the next run starts from the present. */
  Future<Void> forget() {
    return client.removeDocument(COLLECTION, new JsonObject().put("_id", name)).mapEmpty();
  }
}
