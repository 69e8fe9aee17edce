package io.ackpoint.source;

import com.mongodb.event.CommandListener;
import io.ackpoint.AckpointAddresses;
import io.ackpoint.config.AckpointConfig.ReplicationConfig;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.streams.ReadStream;
import io.vertx.ext.mongo.AggregateOptions;
import io.vertx.ext.mongo.MongoClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Follows a MongoDB source: a change stream on the marker collection sends the acknowledgement
 * engine ({@code POSITION_OBSERVED}) the cluster time of every event and of every post-batch resume
 * token, which moves on while the collection is idle. The newest token is saved every
 * {@code replication.status_interval} and on stop; the next run resumes after it. Everything runs on
 * this verticle's event loop; the stream has a client of its own, whose replies tell what the
 * Vert.x stream does not ({@link StreamReplies}). After every (re)open a marker is forced, so that
 * checkpoints left pending by a restart are acknowledged without waiting for other traffic.
 *
 * <p>A server that cannot open a change stream (a standalone {@code mongod}: no oplog) is refused at
 * start, told by what it answers rather than by its topology; a source that does not answer at all
 * does not stop Ackpoint from starting, and readiness says why until it does.
 */
public final class ChangeStreamFollowerVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(ChangeStreamFollowerVerticle.class);
  private static final long MAX_BACKOFF_MS = 5_000;
  /** Heartbeats without the observed position moving on after which a stream is taken for stalled. */
  private static final int SILENT_HEARTBEATS = 3;
  private static final AggregateOptions OPTIONS = new AggregateOptions().setBatchSize(100);

  private final Function<CommandListener, MongoClient> clients;
  private final ReplicationConfig config;
  private final ReplicationSource source;
  private final AckpointAddresses addresses;
  private final FollowerStatus status;
  private final Promise<Void> firstAttempt = Promise.promise();
  private MongoClient client;
  private ResumeTokens tokens;
  private MessageConsumer<Void> health;
  private ReadStream<JsonObject> stream;
  /** Set by the driver's thread when the stream's cursor was closed as it opened; read when it ends. */
  private volatile boolean closedAtOpen;
  private boolean loaded;
  private boolean stopped;
  private long backoff = 100;
  private String position;
  private JsonObject token;
  private JsonObject saved;
  private long heartbeatTimer;
  private long saveTimer;
  /** When the observed position last moved on, or the stream last opened. */
  private long lastAdvance;

  /** {@code clients} makes the stream's own client with a listener; {@code source} writes the markers. */
  public ChangeStreamFollowerVerticle(Function<CommandListener, MongoClient> clients, ReplicationConfig config,
                                     ReplicationSource source, AckpointAddresses addresses, ReplicationListener listener) {
    this.clients = clients;
    this.config = config;
    this.source = source;
    this.addresses = addresses;
    this.status = new FollowerStatus("change stream on " + MongoReplicationSource.MARKERS, listener);
  }

  @Override
  public Future<?> start() {
    health = vertx.eventBus().localConsumer(addresses.healthReplication(), msg -> msg.reply(status.current().toJson()));
    client = clients.apply(new StreamReplies(new StreamReplies.Receiver() {
      @Override
      public void opened(boolean open) {
        if (open) {
          context.runOnContext(v -> following());
        } else {
          closedAtOpen = true;
        }
      }

      @Override
      public void scanned(JsonObject scanned) {
        context.runOnContext(v -> progress(ClusterTime.fromResumeToken(scanned), scanned));
      }
    }));
    tokens = new ResumeTokens(client, config.slotName());
    heartbeatTimer = vertx.setPeriodic(config.heartbeatInterval().toMillis(), id -> heartbeat());
    saveTimer = vertx.setPeriodic(config.statusInterval().toMillis(), id -> save());
    resume();
    // A refused start is not stopped by Vert.x: the client and the timers go here.
    return firstAttempt.future().recover(refused -> stop().transform(ignored -> Future.failedFuture(refused)));
  }

  private void heartbeat() {
    source.forceMarker().onComplete(written -> {
      if (written.failed()) {
        LOG.warn("heartbeat marker failed: {}", written.cause().getMessage());
      } else {
        checkSilence();
      }
    });
  }

  /**
   * Every heartbeat writes a marker the stream watches, so a stream whose position has not moved on
   * for {@link #SILENT_HEARTBEATS} of them, markers written all the while, has stalled without an
   * error (after a resume token ahead of the oplog, say): it said it followed while nothing was
   * acknowledged. It is opened again from the present, which loses nothing: the marker forced as it
   * opens passes every checkpoint stored before.
   */
  private void checkSilence() {
    long silent = System.nanoTime() - lastAdvance;
    if (stream != null && silent > SILENT_HEARTBEATS * config.heartbeatInterval().toNanos()) {
      ReadStream<JsonObject> stalled = stream;
      forgetToken();
      lost(stalled, new FollowerFailure("the change stream went silent: no marker written in the last "
          + TimeUnit.NANOSECONDS.toSeconds(silent) + " s came back through it; opened again from the present"));
    }
  }

  /** Opens the stream after the newest token, which is read from the database on the first run. */
  private void resume() {
    if (stopped) {
      return;
    }
    if (loaded) {
      open();
      return;
    }
    tokens.load().onComplete(ar -> {
      if (ar.failed()) {
        lost(null, ar.cause());
        return;
      }
      loaded = true;
      token = ar.result();
      saved = token;
      open();
    });
  }

  private void open() {
    if (stopped) {
      return;
    }
    closedAtOpen = false;
    lastAdvance = System.nanoTime();
    JsonObject from = token == null ? new JsonObject() : new JsonObject().put("startAfter", token);
    ReadStream<JsonObject> opened = client.aggregateWithOptions(MongoReplicationSource.MARKERS,
        new JsonArray().add(new JsonObject().put("$changeStream", from)), OPTIONS);
    stream = opened;
    opened.exceptionHandler(e -> lost(opened, e))
        .endHandler(v -> lost(opened, new FollowerFailure(closedAtOpen
            ? "the source closed the change stream as it opened: it cannot run change streams"
            : "the change stream ended")))
        .handler(this::event);
  }

  private void following() {
    if (stopped) {
      return;
    }
    backoff = 100;
    status.following();
    firstAttempt.tryComplete();
    heartbeat();
  }

  private void event(JsonObject event) {
    JsonObject id = event.getJsonObject("_id");
    String time = ClusterTime.fromTimestamp(event.getValue("clusterTime"));
    progress(time != null ? time : ClusterTime.fromResumeToken(id), id);
  }

  /** A position seen by the stream, with the token to resume after it; only ever forward. */
  private void progress(String seen, JsonObject after) {
    if (seen == null || after == null || position != null && seen.compareTo(position) <= 0) {
      return;
    }
    position = seen;
    token = after;
    lastAdvance = System.nanoTime();
    vertx.eventBus().send(addresses.positionObserved(), seen);
  }

  /** The stream failed or ended: say why, then open it again after a pause, unless it can never work. */
  private void lost(ReadStream<JsonObject> which, Throwable failure) {
    if (stopped || which != stream) {
      return;
    }
    stream = null;
    if (which != null) {
      which.handler(null);
    }
    StreamFailures.Kind kind = StreamFailures.of(failure, closedAtOpen);
    // Refused after a token, the token may be what the server refuses (malformed, or edited by hand):
    // only a start from the present tells, and it loses nothing (the marker forced as the stream
    // opens passes every checkpoint stored before it). A source that cannot follow refuses that too.
    if (kind == StreamFailures.Kind.CANNOT_FOLLOW && token != null) {
      LOG.warn("the change stream refused to open after the resume token {} ({}): following from the present",
          token.encode(), ReplicationFailures.oneLine(failure));
      forgetToken();
      vertx.setTimer(backoff, id -> resume());
      return;
    }
    if (kind == StreamFailures.Kind.CANNOT_FOLLOW && !firstAttempt.future().isComplete()) {
      firstAttempt.tryFail(new IllegalStateException("source.uri: the source cannot open a change stream, which"
          + " Ackpoint follows MongoDB with: it must be a replica set or a sharded cluster (a single-node replica set"
          + " will do; a standalone mongod has no oplog). The server said: " + ReplicationFailures.oneLine(failure)));
      return;
    }
    if (kind == StreamFailures.Kind.HISTORY_LOST) {
      LOG.warn("the saved resume token can no longer be resumed after ({}): following from the present", failure.getMessage());
      forgetToken();
    }
    String reason = (kind == StreamFailures.Kind.CANNOT_FOLLOW ? "the source cannot open a change stream: " : "change stream lost: ")
        + ReplicationFailures.oneLine(failure);
    if (StreamFailures.cutOff(failure)) {
      status.cutOff(reason);
    } else {
      status.failed(reason);
    }
    firstAttempt.tryComplete();
    vertx.setTimer(backoff, id -> resume());
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  }

  private void forgetToken() {
    token = null;
    tokens.forget().onComplete(ar -> saved = null);
  }

  private Future<Void> save() {
    JsonObject current = token;
    if (current == null || current.equals(saved)) {
      return Future.succeededFuture();
    }
    return tokens.save(current, position)
        .onSuccess(v -> saved = current)
        .onFailure(e -> LOG.warn("could not save the change stream's resume token: {}", e.getMessage()));
  }

  @Override
  public Future<?> stop() {
    stopped = true;
    vertx.cancelTimer(heartbeatTimer);
    vertx.cancelTimer(saveTimer);
    health.unregister();
    if (stream != null) {
      stream.handler(null);
      stream = null;
    }
    status.stopped();
    // The newest token is saved before the client goes, so that the next run resumes after it.
    return save().transform(ignored -> client.close());
  }
}
