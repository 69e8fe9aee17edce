package io.ackpoint.storage;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.bulk.BulkWriteError;
import io.ackpoint.AckpointError;
import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.CustomCheckpoint;
import io.ackpoint.core.CustomCheckpoints;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.GreatestIds;
import io.ackpoint.core.Reached;
import io.ackpoint.core.StoredBatch;
import io.ackpoint.core.WriteOutcome;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.mongo.BulkOperation;
import io.vertx.ext.mongo.BulkWriteOptions;
import io.vertx.ext.mongo.FindOptions;
import io.vertx.ext.mongo.MongoClient;
import io.vertx.ext.mongo.MongoClientDeleteResult;
import io.vertx.ext.mongo.UpdateOptions;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static io.ackpoint.storage.CheckpointDocument.ACKNOWLEDGED;
import static io.ackpoint.storage.CheckpointDocument.CHECKPOINT;
import static io.ackpoint.storage.CheckpointDocument.CLIENT;
import static io.ackpoint.storage.CheckpointDocument.COLLECTION;
import static io.ackpoint.storage.CheckpointDocument.HEAD;
import static io.ackpoint.storage.CheckpointDocument.ID;
import static io.ackpoint.storage.CheckpointDocument.LSNS;
import static io.ackpoint.storage.CheckpointDocument.PROCESSED;
import static io.ackpoint.storage.CheckpointDocument.PROCESSED_BY;
import static io.ackpoint.storage.CheckpointDocument.REQUESTED;
import static io.ackpoint.storage.CheckpointDocument.USER;

/**
 * Write checkpoints in MongoDB, with the contract of {@link PgCheckpointStorage} and without
 * transactions: a batch is one read of its users' documents and one unordered bulk write of
 * compare-and-set upserts ({@link UserPlan}); the users whose documents changed in between are read
 * and written again, so the round trips per batch are bounded whatever its size.
 */
public final class MongoCheckpointStorage implements CheckpointStorage {

  /**
   * Each attempt settles at least one of the contending batches for every user it carries, so as
   * many attempts as batches can be in flight at once (default 3, per node) resolve all contention.
   */
  private static final int MAX_ATTEMPTS = 16;
  private static final int DUPLICATE_KEY = 11000;

  private final MongoClient client;
  private final Clock clock;
  private final int customChunk;

  public MongoCheckpointStorage(MongoClient client) {
    this(client, Clock.systemUTC(), CustomCheckpoints.PER_STATEMENT);
  }

  MongoCheckpointStorage(MongoClient client, Clock clock, int customChunk) {
    this.client = client;
    this.clock = clock;
    this.customChunk = customChunk;
  }

  @Override
  public Future<StoredBatch> store(String head, List<CheckpointWrite> writes) {
    JsonObject lsns = new JsonObject().put("1", head);
    return guarded(Attempts.run(writes, MAX_ATTEMPTS, attempt -> attempt(attempt, (w, documents, now) -> UserPlan.of(w, documents, lsns, now))));
  }

  /** How one attempt plans a write on the documents it read, at the attempt's time {@code now}. */
  private interface Planner {
    UserPlan plan(CheckpointWrite write, List<CheckpointDocument> documents, JsonObject now);
  }

  private Future<Attempts.Attempt> attempt(List<CheckpointWrite> writes, Planner planner) {
    JsonObject now = date(clock.instant());
    return documentsOf(writes).compose(documents -> {
      List<UserPlan> plans = new ArrayList<>(writes.size());
      List<BulkOperation> operations = new ArrayList<>();
      List<UserPlan> owners = new ArrayList<>();
      for (CheckpointWrite w : writes) {
        if (documents.unreadable().contains(w.user())) {
          continue;
        }
        UserPlan plan = planner.plan(w, documents.byUser().getOrDefault(w.user(), List.of()), now);
        plans.add(plan);
        for (BulkOperation operation : plan.operations()) {
          operations.add(operation);
          owners.add(plan);
        }
      }
      Future<List<BulkWriteError>> written = operations.isEmpty() ? Future.succeededFuture(List.of())
          : client.bulkWriteWithOptions(COLLECTION, operations, new BulkWriteOptions(false))
          .<List<BulkWriteError>>map(List.of())
          .recover(MongoCheckpointStorage::writeErrors);
      return written.map(errors -> {
        Attempts.Attempt settled = settle(plans, owners, errors);
        documents.unreadable().forEach(user -> settled.outcomes().put(user, new WriteOutcome.Rejected(
            "a stored document of this user has a " + CHECKPOINT + " that is not a whole number")));
        return settled;
      });
    });
  }

  /** The documents of a batch's users, by user; and the users one of whose documents has no id Ackpoint can read. */
  private record Documents(Map<FullUserId, List<CheckpointDocument>> byUser, Set<FullUserId> unreadable) {
  }

  /** The documents of the batch's users, by user, in one query on the user key. */
  private Future<Documents> documentsOf(List<CheckpointWrite> writes) {
    JsonArray keys = new JsonArray();
    writes.forEach(w -> keys.add(CheckpointDocument.key(w.user())));
    FindOptions options = new FindOptions().setBatchSize(writes.size() + 1)
        .setFields(new JsonObject().put(USER, 1).put(CLIENT, 1).put(CHECKPOINT, 1).put(LSNS, 1).put(PROCESSED, 1));
    return client.findWithOptions(COLLECTION, new JsonObject().put("$or", keys), options).map(found -> {
      Map<FullUserId, List<CheckpointDocument>> byUser = new HashMap<>();
      Set<FullUserId> unreadable = new HashSet<>();
      for (JsonObject doc : found) {
        CheckpointDocument d = CheckpointDocument.of(doc);
        if (d == null) {
          unreadable.add(CheckpointDocument.user(doc));
        } else {
          byUser.computeIfAbsent(d.user(), u -> new ArrayList<>()).add(d);
        }
      }
      return new Documents(byUser, unreadable);
    });
  }

  /** Operations refused one by one come back as errors; anything else (unreachable, timed out) fails the batch. */
  private static Future<List<BulkWriteError>> writeErrors(Throwable failure) {
    if (failure instanceof MongoBulkWriteException bulk && bulk.getWriteConcernError() == null) {
      return Future.succeededFuture(bulk.getWriteErrors());
    }
    return Future.failedFuture(failure);
  }

  /**
   * A user answers as planned when all its operations applied. A duplicate key error means its
   * documents changed since they were read (or a concurrent batch created the user): it goes again.
   * Any other refusal is of its data alone, and the rest of the batch stands.
   */
  private static Attempts.Attempt settle(List<UserPlan> plans, List<UserPlan> owners, List<BulkWriteError> errors) {
    Map<UserPlan, String> rejected = new HashMap<>();
    Set<UserPlan> contended = new LinkedHashSet<>();
    for (BulkWriteError error : errors) {
      UserPlan owner = owners.get(error.getIndex());
      if (error.getCode() == DUPLICATE_KEY) {
        contended.add(owner);
      } else {
        rejected.putIfAbsent(owner, error.getMessage() + " (" + error.getCode() + ")");
      }
    }
    Map<FullUserId, WriteOutcome> outcomes = new HashMap<>();
    boolean pending = false;
    List<CheckpointWrite> again = new ArrayList<>();
    for (UserPlan plan : plans) {
      if (rejected.containsKey(plan)) {
        outcomes.put(plan.write().user(), new WriteOutcome.Rejected(rejected.get(plan)));
      } else if (contended.contains(plan)) {
        again.add(plan.write());
      } else {
        outcomes.put(plan.write().user(), plan.outcome());
        pending |= plan.outcome().pending();
      }
    }
    return new Attempts.Attempt(outcomes, pending, again);
  }

  /**
   * The greatest id of a transaction wins per user, as a supplied id does on the checkpoint-request
   * route ({@link UserPlan}, with the application's request flag for its request time): documents
   * below it are raised to it at {@code position}, and a user without any gets one. Read first and
   * written by compare-and-set like a batch, so that a processed document raised keeps the id it
   * held as its acknowledged one (a stream that opens while the raised one is pending starts there,
   * not below an id it may have been told already), and an acknowledgement or a batch that changes
   * a document meanwhile makes only that user go again. {@link CustomCheckpoints#PER_STATEMENT}
   * users per bulk write, as PostgreSQL stores them per statement.
   */
  @Override
  public Future<Void> storeCustom(String position, List<CustomCheckpoint> checkpoints) {
    JsonObject lsns = new JsonObject().put("1", position);
    return CustomCheckpoints.storeInChunks(checkpoints, customChunk, chunk -> storeCustomChunk(lsns, chunk));
  }

  private Future<Void> storeCustomChunk(JsonObject lsns, List<CustomCheckpoint> chunk) {
    Map<FullUserId, Boolean> requests = new HashMap<>();
    List<CheckpointWrite> writes = new ArrayList<>(chunk.size());
    for (CustomCheckpoint c : chunk) {
      requests.put(c.user(), c.request());
      writes.add(CheckpointWrite.requested(c.user(), c.checkpoint()));
    }
    Planner custom = (w, documents, now) -> UserPlan.of(w, documents, lsns, requests.get(w.user()) ? now : null);
    return guarded(Attempts.run(writes, MAX_ATTEMPTS, attempt -> attempt(attempt, custom)).compose(stored -> {
      for (Map.Entry<FullUserId, WriteOutcome> outcome : stored.outcomes().entrySet()) {
        // A user not stored fails the chunk: the slot sends the transaction again, and the users
        // stored already are stored again harmlessly.
        if (outcome.getValue() instanceof WriteOutcome.Rejected rejected) {
          return Future.failedFuture("the custom checkpoint of " + outcome.getKey() + " was refused: " + rejected.reason());
        }
        if (outcome.getValue() instanceof WriteOutcome.Contended) {
          return Future.failedFuture("the custom checkpoint of " + outcome.getKey() + " met changed documents at every attempt");
        }
      }
      return Future.<Void>succeededFuture();
    }));
  }

  /**
   * Marks the pending documents whose head is at or before {@code position}, stamping them with a
   * mark of this call, and answers for exactly the documents so stamped: one that a batch raised to a
   * later head in between is neither marked nor announced, and a position applied twice (after a
   * restart) announces nothing twice.
   */
  @Override
  public Future<List<Reached>> markProcessed(String position) {
    String mark = UUID.randomUUID().toString();
    JsonObject due = new JsonObject().put(PROCESSED, null).put(HEAD, new JsonObject().put("$lte", position));
    JsonObject marked = new JsonObject().put(PROCESSED, position).put(PROCESSED_BY, mark);
    return guarded(client.updateCollectionWithOptions(COLLECTION, due, new JsonObject().put("$set", marked),
            new UpdateOptions().setMulti(true))
        .compose(result -> result == null || result.getDocModified() == 0 ? Future.succeededFuture(List.<JsonObject>of())
            : client.findWithOptions(COLLECTION, marked,
            new FindOptions().setFields(new JsonObject().put(USER, 1).put(CLIENT, 1).put(CHECKPOINT, 1))))
        .map(MongoCheckpointStorage::greatestPerUser));
  }

  /** One {@link Reached} per user, with its greatest id: duplicates never tell a lower id after a higher one. */
  private static List<Reached> greatestPerUser(List<JsonObject> documents) {
    GreatestIds greatest = new GreatestIds();
    for (JsonObject doc : documents) {
      // One whose id is unreadable is marked, not announced: it must not stop the others' announcement.
      Long checkpoint = CheckpointDocument.checkpointOf(doc);
      if (checkpoint != null) {
        greatest.add(CheckpointDocument.user(doc), checkpoint);
      }
    }
    return greatest.reached();
  }

  /** A pending document answers the id acknowledged before a batch raised it ({@link CheckpointDocument#ACKNOWLEDGED}). */
  @Override
  public Future<Acknowledged> latestAcknowledged(FullUserId user) {
    FindOptions fields = new FindOptions().setFields(new JsonObject().put(CHECKPOINT, 1).put(PROCESSED, 1).put(ACKNOWLEDGED, 1));
    return guarded(client.findWithOptions(COLLECTION, CheckpointDocument.key(user), fields).map(found -> {
      Acknowledged latest = null;
      for (JsonObject doc : found) {
        String processedAt = doc.getValue(PROCESSED) instanceof String position ? position : null;
        Long acknowledged = CheckpointDocument.wholeNumber(doc.getValue(processedAt != null ? CHECKPOINT : ACKNOWLEDGED));
        if (acknowledged != null) {
          latest = Acknowledged.greater(latest, new Acknowledged(acknowledged, processedAt));
        }
      }
      return latest;
    }));
  }

  /**
   * At most {@code limit} of the oldest expired requests, then a delete that checks the conditions
   * again, so a document raised (pending again) or refreshed in between is spared. The conditions
   * name the retention index's partial filter as it is, which is what lets MongoDB use it.
   */
  @Override
  public Future<CompactionStep> deleteExpiredRequests(Instant requestedBefore, int limit, long from) {
    // The index on checkpoint_requested_at leads straight to the oldest expired documents: each
    // step starts from the beginning again, until one comes back short.
    JsonObject expired = new JsonObject()
        .put(REQUESTED, new JsonObject().put("$type", "date").put("$lt", date(requestedBefore)))
        .put(PROCESSED, new JsonObject().put("$type", "string"));
    FindOptions oldest = new FindOptions().setSort(new JsonObject().put(REQUESTED, 1)).setLimit(limit)
        .setFields(new JsonObject().put(ID, 1));
    return guarded(client.findWithOptions(COLLECTION, expired, oldest).compose(found -> {
      if (found.isEmpty()) {
        return Future.succeededFuture(new CompactionStep(0, null));
      }
      JsonArray ids = new JsonArray();
      found.forEach(doc -> ids.add(doc.getValue(ID)));
      return client.removeDocuments(COLLECTION, expired.copy().put(ID, new JsonObject().put("$in", ids)))
          .map(result -> {
            int deleted = deleted(result);
            return new CompactionStep(deleted, deleted < limit ? null : CompactionStep.START);
          });
    }));
  }

  private static int deleted(MongoClientDeleteResult result) {
    return result == null ? 0 : (int) result.getRemovedCount();
  }

  @Override
  public Future<Long> count() {
    return guarded(client.count(COLLECTION, new JsonObject()));
  }

  @Override
  public Future<Void> ping() {
    return guarded(client.runCommand("ping", new JsonObject().put("ping", 1)).mapEmpty());
  }

  /** A BSON date, as the Vert.x client writes one. */
  static JsonObject date(Instant instant) {
    return new JsonObject().put("$date", instant.toString());
  }

  private static <T> Future<T> guarded(Future<T> operation) {
    return AckpointError.STORAGE_UNAVAILABLE.onFailure(operation);
  }
}
