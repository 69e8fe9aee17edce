package io.ackpoint.storage;

import io.ackpoint.core.FullUserId;
import io.ackpoint.core.Reached;
import io.ackpoint.core.StoredBatch;
import io.ackpoint.core.WriteOutcome;
import io.ackpoint.support.Await;
import io.ackpoint.support.TestMongo;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.mongo.FindOptions;
import io.vertx.ext.mongo.MongoClient;
import io.vertx.ext.mongo.UpdateOptions;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static io.ackpoint.storage.StorageBackend.H1;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The storage contract on the MongoDB test server (mongo-java-server, see {@link TestMongo}), and what
 * is MongoDB's own: its indexes and migrations.
 */
class MongoCheckpointStorageTest extends CheckpointStorageContract {

  private static final String COLLECTION = CheckpointDocument.COLLECTION;
  private MongoClient client;

  @Override
  StorageBackend open(Vertx vertx) {
    client = MongoClient.create(vertx, new JsonObject().put("connection_string", TestMongo.freshDatabase()));
    MongoCheckpointStorage mongo = new MongoCheckpointStorage(client);
    return new StorageBackend() {
      @Override
      public CheckpointStorage storage() {
        return mongo;
      }

      @Override
      public AcknowledgementHistory history() {
        return new MongoAcknowledgementHistory(client);
      }

      @Override
      public void migrate() {
        Await.result(MongoMigrations.migrate(client));
      }

      @Override
      public void migrateHolding(List<StorageBackend.Seed> seeds) {
        Await.result(MongoMigrations.migrate(client, MongoMigrations.MIGRATIONS_IN_ORDER.subList(0, 1)));
        for (StorageBackend.Seed s : seeds) {
          Await.result(client.insert(COLLECTION, key(s.userId()).put("write_checkpoint", s.checkpoint())
              .put("lsns", new JsonObject().put("1", s.head())).put("processed_at_lsn", null).put("checkpoint_requested_at", null)));
        }
        migrate();
      }

      @Override
      public StorageBackend.Row row(String user) {
        List<JsonObject> found = Await.result(client.find(COLLECTION, key(user)));
        assertEquals(1, found.size(), user);
        JsonObject doc = found.get(0);
        JsonObject requested = doc.getJsonObject("checkpoint_requested_at");
        return new StorageBackend.Row(doc.getLong("write_checkpoint"), doc.getJsonObject("lsns").getString("1"),
            doc.getString("processed_at_lsn"), requested == null ? null : Instant.parse(requested.getString("$date")));
      }

      @Override
      public List<Long> ids(String user) {
        List<Long> ids = new ArrayList<>();
        Await.result(client.findWithOptions(COLLECTION, key(user), new FindOptions().setSort(new JsonObject().put("write_checkpoint", 1))))
            .forEach(doc -> ids.add(doc.getLong("write_checkpoint")));
        return ids;
      }

      @Override
      public long rows(FullUserId user) {
        return Await.result(client.count(COLLECTION, CheckpointDocument.key(user)));
      }

      @Override
      public long rows() {
        return Await.result(client.count(COLLECTION, new JsonObject()));
      }

      @Override
      public void markProcessed(String user, String position) {
        set(user, new JsonObject().put("processed_at_lsn", position));
      }

      @Override
      public void setRequestedAt(String user, Instant at) {
        set(user, new JsonObject().put("checkpoint_requested_at", MongoCheckpointStorage.date(at)));
      }

      private void set(String user, JsonObject fields) {
        Await.result(client.updateCollectionWithOptions(COLLECTION, key(user), new JsonObject().put("$set", fields),
            new UpdateOptions().setMulti(true)));
      }

      @Override
      public void close() {
        Await.result(client.close());
      }
    };
  }

  private static JsonObject key(String user) {
    return CheckpointDocument.key(FullUserId.of(user, null));
  }

  /** Index name to its description, as the server lists them. */
  private Map<String, JsonObject> indexes() {
    Map<String, JsonObject> byName = new TreeMap<>();
    Await.result(client.listIndexes(COLLECTION)).forEach(o -> byName.put(((JsonObject) o).getString("name"), (JsonObject) o));
    return byName;
  }

  @Test
  void freshInstallHasAUniqueIndexOnTheFullUserIdAndAPartialRetentionIndex() {
    backend.migrate();
    Map<String, JsonObject> indexes = indexes();
    assertEquals(List.of("_id_", "compactable", "pending_heads", "user_key"), new ArrayList<>(indexes.keySet()));
    assertEquals(new JsonObject().put("user_id", 1).put("client_id", 1), indexes.get("user_key").getJsonObject("key"));
    assertTrue(indexes.get("user_key").getBoolean("unique"));
    assertEquals(new JsonObject().put("checkpoint_requested_at", new JsonObject().put("$type", "date"))
            .put("processed_at_lsn", new JsonObject().put("$type", "string")),
        indexes.get("compactable").getJsonObject("partialFilterExpression"));
    assertEquals(0, (int) Await.result(MongoMigrations.migrate(client)), "migrations run once");
  }

  @Test
  void anInstallHoldingDuplicatesKeepsItsPlainIndex() {
    backend.migrateHolding(List.of(new StorageBackend.Seed("dup", 3, H1), new StorageBackend.Seed("dup", 6, H1)));
    Map<String, JsonObject> indexes = indexes();
    assertTrue(indexes.containsKey("user_id"), indexes.toString());
    assertFalse(indexes.containsKey("user_key"), "a unique index cannot be built over duplicates");
  }

  /**
   * A document whose id is not a whole number (edited by hand) fails its own user's requests, and
   * neither the batch it shares nor the acknowledgement of the users marked with it.
   */
  @Test
  void aDocumentWhoseIdIsNoNumberFailsItsOwnUserAloneInABatchAndInAnAcknowledgement() {
    backend.migrate();
    CheckpointStorage storage = backend.storage();
    Await.result(storage.store(H1, List.of(StorageBackend.requested("bad", 5), StorageBackend.requested("good", 5))));
    Await.result(client.updateCollection(COLLECTION, key("bad"), new JsonObject().put("$set", new JsonObject().put("write_checkpoint", "abc"))));

    StoredBatch batch = Await.result(storage.store(StorageBackend.H2,
        List.of(StorageBackend.requested("bad", 6), StorageBackend.requested("good", 6))));
    assertInstanceOf(WriteOutcome.Rejected.class, batch.outcomes().get(StorageBackend.user("bad")), batch.toString());
    assertInstanceOf(WriteOutcome.Stored.class, batch.outcomes().get(StorageBackend.user("good")), batch.toString());
    assertEquals(List.of(new Reached(StorageBackend.user("good"), 6)), Await.result(storage.markProcessed(StorageBackend.H2)));
  }
}
