package io.ackpoint.source;

import com.mongodb.MongoCommandException;
import io.ackpoint.AckpointError;
import io.ackpoint.core.MarkerDecision;
import io.ackpoint.core.PositionFormat;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.mongo.MongoClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.Function;
import java.util.function.Supplier;

/**
 * MongoDB as a source. The head is the cluster time of a {@code hello} reply from the primary: every
 * write acknowledged before it has an oplog time at or before it. The marker is an {@code $inc}
 * upsert on one fixed document of {@value #MARKERS}, which the follower's change stream watches; the
 * driver sends the greatest cluster time it has seen with every command, so the marker's operation
 * time follows the head, and that is checked. The Vert.x client has no explicit sessions: that
 * gossip, shared by all of the client's sessions, is what the reference's session gives here.
 */
public final class MongoReplicationSource implements ReplicationSource {

  private static final Logger LOG = LoggerFactory.getLogger(MongoReplicationSource.class);

  /** The collection of the marker document; the follower watches it. */
  public static final String MARKERS = "_ackpoint_checkpoints";
  static final String MARKER_ID = "checkpoint";
  private static final int COMMAND_NOT_FOUND = 59;
  private static final int TYPE_MISMATCH = 14;
  /** A marker whose operation time precedes the head is written again, at most this often in all. */
  private static final int MARKER_ATTEMPTS = 3;

  private final MongoClient client;
  private final OplogHead oplog;
  /** Learnt from the server's first answer: it keeps no logical clock, so the oplog tells the head. */
  private volatile boolean noClusterTime;

  /** {@code local} makes a client on the source's {@code local} database, for a server without cluster time. */
  public MongoReplicationSource(MongoClient client, Supplier<MongoClient> local) {
    this.client = client;
    this.oplog = new OplogHead(local);
  }

  @Override
  public PositionFormat positions() {
    return ClusterTime.FORMAT;
  }

  @Override
  public Future<String> readHead() {
    if (noClusterTime) {
      return guarded(oplog.read());
    }
    Future<String> fromHello = client.runCommand("hello", new JsonObject().put("hello", 1))
        .map(ClusterTime::ofReply)
        .recover(e -> e instanceof MongoCommandException c && c.getErrorCode() == COMMAND_NOT_FOUND
            ? Future.succeededFuture(null) : Future.failedFuture(e));
    return guarded(fromHello.compose(head -> {
      if (head != null) {
        return Future.succeededFuture(head);
      }
      noClusterTime = true;
      return oplog.read();
    }));
  }

  @Override
  public Future<Void> forceMarker() {
    return guarded(marker()).mapEmpty();
  }

  /** As the interface says, and the marker's operation time is then at or after the head. */
  @Override
  public <R extends MarkerDecision> Future<R> createReplicationHead(Function<String, Future<R>> persist) {
    return readHead()
        .compose(head -> persist.apply(head)
            .compose(result -> result.shouldAdvance() ? guarded(markerAfter(head, 1)).map(result) : Future.succeededFuture(result)));
  }

  private Future<Void> markerAfter(String head, int attempt) {
    return marker().compose(time -> {
      if (time == null || time.compareTo(head) >= 0) {
        return Future.succeededFuture();
      }
      return attempt < MARKER_ATTEMPTS ? markerAfter(head, attempt + 1) : Future.failedFuture(new IllegalStateException(
          "the marker's operation time " + time + " precedes the head " + head));
    });
  }

  /**
   * Writes the marker; answers its operation time, or {@code null} from a server that does not tell
   * it (the test server, whose oplog times grow with every write anyway).
   */
  private Future<String> marker() {
    return markerWrite("$inc").compose(reply -> {
      if (!isTypeMismatch(reply.getJsonArray("writeErrors"))) {
        return Future.succeededFuture(reply);
      }
      // The document's counter is no number (edited by hand): every marker, and so every checkpoint,
      // would be refused for ever. Setting it is a change, so a marker as well; the next ones count on.
      LOG.warn("the counter of the marker document in {} was no number: set again", MARKERS);
      return markerWrite("$set");
    }).compose(reply -> reply.containsKey("writeErrors")
        ? Future.failedFuture(new IllegalStateException("the marker was refused: " + reply.getJsonArray("writeErrors").encode()))
        : Future.succeededFuture(ClusterTime.operationTime(reply)));
  }

  /** The marker's upsert with {@code operator} ({@code $inc}, or {@code $set} to repair it): the server's reply. */
  private Future<JsonObject> markerWrite(String operator) {
    JsonObject update = new JsonObject()
        .put("q", new JsonObject().put("_id", MARKER_ID))
        .put("u", new JsonObject().put(operator, new JsonObject().put("i", 1)))
        .put("upsert", true);
    return client.runCommand("update", new JsonObject().put("update", MARKERS).put("updates", new JsonArray().add(update)));
  }

  private static boolean isTypeMismatch(JsonArray writeErrors) {
    if (writeErrors != null) {
      for (Object error : writeErrors) {
        if (error instanceof JsonObject e && e.getValue("code") instanceof Number code && code.intValue() == TYPE_MISMATCH) {
          return true;
        }
      }
    }
    return false;
  }

  private static <T> Future<T> guarded(Future<T> operation) {
    return AckpointError.SOURCE_UNAVAILABLE.onFailure(operation);
  }
}
