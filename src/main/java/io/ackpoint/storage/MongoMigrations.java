package io.ackpoint.storage;

import com.mongodb.MongoServerException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.mongo.IndexOptions;
import io.vertx.ext.mongo.MongoClient;

import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

import static io.ackpoint.storage.CheckpointDocument.CLIENT;
import static io.ackpoint.storage.CheckpointDocument.COLLECTION;
import static io.ackpoint.storage.CheckpointDocument.HEAD;
import static io.ackpoint.storage.CheckpointDocument.PROCESSED;
import static io.ackpoint.storage.CheckpointDocument.REQUESTED;
import static io.ackpoint.storage.CheckpointDocument.USER;

/**
 * Versioned schema migrations of MongoDB storage, run at startup. MongoDB has no DDL transactions, so
 * every migration is idempotent instead: several Ackpoint nodes starting together may each run one,
 * with the same result, and the first to record it wins.
 */
public final class MongoMigrations {

  static final String MIGRATIONS = "ackpoint_migrations";
  /** The unique index on the full user id, for installs whose data allows one. */
  static final String USER_KEY_INDEX = "user_key";
  /** The plain index that serves installs which hold duplicate documents per user. */
  static final String USER_ID_INDEX = "user_id";
  static final String PENDING_INDEX = "pending_heads";
  static final String RETENTION_INDEX = "compactable";
  private static final int DUPLICATE_KEY = 11000;
  private static final int INDEX_NOT_FOUND = 27;

  record Migration(int version, String description, Function<MongoClient, Future<Void>> apply) {
  }

  static final List<Migration> MIGRATIONS_IN_ORDER = List.of(
      new Migration(1, "write checkpoints collection, indexed by user", client ->
          client.createIndexWithOptions(COLLECTION, new JsonObject().put(USER, 1), new IndexOptions().name(USER_ID_INDEX))),
      // The unique index replaces the plain one only where the data allows it: on an install that
      // holds duplicate documents per user, building it fails and the plain index stays; storage
      // tolerates the duplicates. Building is the check, so no duplicate can slip in between a check
      // and the build. The new index has its own name and key, so it is built before the old one is
      // dropped and queries are never without an index on the user.
      new Migration(2, "unique index on the full user id", client ->
          client.createIndexWithOptions(COLLECTION, new JsonObject().put(USER, 1).put(CLIENT, 1),
                  new IndexOptions().name(USER_KEY_INDEX).unique(true))
              .compose(built -> ignoring(client.dropIndex(COLLECTION, USER_ID_INDEX), INDEX_NOT_FOUND))
              .recover(e -> isCode(e, DUPLICATE_KEY) ? Future.succeededFuture() : Future.failedFuture(e))),
      // The acknowledgement update looks up pending documents by head (processed_at_lsn null, the
      // prefix), and the answer then finds what it marked by the position it set.
      new Migration(3, "index on heads by processed state", client ->
          client.createIndexWithOptions(COLLECTION, new JsonObject().put(PROCESSED, 1).put(HEAD, 1),
              new IndexOptions().name(PENDING_INDEX))),
      // Compaction looks up processed, client-requested documents by age; generated and pending ones
      // stay out of the index. Queries must repeat this filter to use it (see deleteExpiredRequests).
      new Migration(4, "partial index on compactable documents", client ->
          client.createIndexWithOptions(COLLECTION, new JsonObject().put(REQUESTED, 1), new IndexOptions().name(RETENTION_INDEX)
              .partialFilterExpression(new JsonObject()
                  .put(REQUESTED, new JsonObject().put("$type", "date"))
                  .put(PROCESSED, new JsonObject().put("$type", "string"))))));

  private MongoMigrations() {
  }

  /** Applies the migrations not recorded yet, in order; answers how many this call applied. */
  public static Future<Integer> migrate(MongoClient client) {
    return migrate(client, MIGRATIONS_IN_ORDER);
  }

  static Future<Integer> migrate(MongoClient client, List<Migration> migrations) {
    return client.find(MIGRATIONS, new JsonObject()).compose(recorded -> {
      Set<Integer> applied = new HashSet<>();
      recorded.forEach(doc -> applied.add(((Number) doc.getValue("_id")).intValue()));
      Future<Integer> chain = Future.succeededFuture(0);
      for (Migration m : migrations) {
        if (!applied.contains(m.version())) {
          chain = chain.compose(count -> m.apply().apply(client).compose(v -> record(client, m)).map(count + 1));
        }
      }
      return chain;
    });
  }

  private static Future<Void> record(MongoClient client, Migration m) {
    JsonObject doc = new JsonObject().put("_id", m.version()).put("description", m.description())
        .put("applied_at", MongoCheckpointStorage.date(Instant.now()));
    // Another node recorded it first: the same idempotent migration ran twice, which is fine.
    return ignoring(client.insert(MIGRATIONS, doc).mapEmpty(), DUPLICATE_KEY);
  }

  private static Future<Void> ignoring(Future<?> operation, int code) {
    return operation.<Void>mapEmpty().recover(e -> isCode(e, code) ? Future.succeededFuture() : Future.failedFuture(e));
  }

  private static boolean isCode(Throwable e, int code) {
    return e instanceof MongoServerException server && server.getCode() == code;
  }
}
