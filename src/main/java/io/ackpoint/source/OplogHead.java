package io.ackpoint.source;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.mongo.FindOptions;
import io.vertx.ext.mongo.MongoClient;

import java.util.function.Supplier;

/**
 * The head of a MongoDB-compatible server that keeps an oplog but no logical clock, so that its
 * replies carry no {@code $clusterTime} (mongo-java-server, on which the tests run): the timestamp of
 * the newest oplog entry. Every write acknowledged before the read has an entry at or before it, and
 * every later write, a marker included, one after it. A real replica set never takes this path;
 * a standalone {@code mongod} has no oplog and is told so.
 */
final class OplogHead {

  private static final String OPLOG = "oplog.rs";
  private static final FindOptions NEWEST = new FindOptions()
      .setSort(new JsonObject().put("$natural", -1)).setLimit(1).setFields(new JsonObject().put("ts", 1));

  /** A client on the {@code local} database, made on first use only (a real replica set never needs it). */
  private final Supplier<MongoClient> local;

  OplogHead(Supplier<MongoClient> local) {
    this.local = local;
  }

  Future<String> read() {
    MongoClient oplog = local.get();
    return oplog.findWithOptions(OPLOG, new JsonObject(), NEWEST).compose(found -> {
      String head = found.isEmpty() ? null : ClusterTime.fromTimestamp(found.get(0).getValue("ts"));
      if (head != null) {
        return Future.succeededFuture(head);
      }
      // An empty oplog: nothing was ever written, so every position is at or after every write.
      return oplog.getCollections().compose(names -> names.contains(OPLOG) ? Future.succeededFuture(ClusterTime.format(0))
          : Future.failedFuture(new IllegalStateException("the source reports no cluster time and has no oplog:"
              + " MongoDB must run as a replica set (a single-node replica set will do) for Ackpoint to follow it")));
    });
  }
}
