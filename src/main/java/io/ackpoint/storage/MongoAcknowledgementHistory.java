package io.ackpoint.storage;

import io.ackpoint.AckpointError;
import io.ackpoint.core.Reached;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.mongo.FindOptions;
import io.vertx.ext.mongo.MongoClient;

import java.util.List;
import java.util.NavigableMap;

import static io.ackpoint.storage.CheckpointDocument.CHECKPOINT;
import static io.ackpoint.storage.CheckpointDocument.CLIENT;
import static io.ackpoint.storage.CheckpointDocument.COLLECTION;
import static io.ackpoint.storage.CheckpointDocument.PROCESSED;
import static io.ackpoint.storage.CheckpointDocument.USER;

/** {@link AcknowledgementHistory} of MongoDB storage: positions are strings, compared as bytes like PostgreSQL's "C". */
public final class MongoAcknowledgementHistory implements AcknowledgementHistory {

  private final MongoClient client;

  public MongoAcknowledgementHistory(MongoClient client) {
    this.client = client;
  }

  @Override
  public Future<NavigableMap<String, List<Reached>>> processedFrom(String from, String upTo) {
    JsonObject range = new JsonObject().put("$type", "string").put("$gte", from);
    if (upTo != null) {
      range.put("$lte", upTo);
    }
    FindOptions fields = new FindOptions().setFields(new JsonObject().put(PROCESSED, 1).put(USER, 1).put(CLIENT, 1).put(CHECKPOINT, 1));
    return AckpointError.STORAGE_UNAVAILABLE.onFailure(client.findWithOptions(COLLECTION, new JsonObject().put(PROCESSED, range), fields).map(found -> {
      ProcessedRows processed = new ProcessedRows();
      for (JsonObject doc : found) {
        Long checkpoint = CheckpointDocument.checkpointOf(doc);
        if (checkpoint != null) {
          processed.add(doc.getString(PROCESSED), CheckpointDocument.user(doc), checkpoint);
        }
      }
      return processed.result();
    }));
  }

  @Override
  public Future<String> latestProcessed() {
    // Sorted with a limit of one: the server keeps only the greatest while it scans.
    FindOptions latest = new FindOptions().setFields(new JsonObject().put(PROCESSED, 1))
        .setSort(new JsonObject().put(PROCESSED, -1)).setLimit(1);
    return AckpointError.STORAGE_UNAVAILABLE.onFailure(client.findWithOptions(COLLECTION,
        new JsonObject().put(PROCESSED, new JsonObject().put("$type", "string")), latest)
        .map(found -> found.isEmpty() ? "" : found.get(0).getString(PROCESSED)));
  }
}
