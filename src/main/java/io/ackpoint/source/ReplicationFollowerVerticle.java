package io.ackpoint.source;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.config.AckpointConfig.CustomTable;
import io.ackpoint.config.AckpointConfig.ReplicationConfig;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.pgclient.PgConnectOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.SQLException;
import java.util.concurrent.TimeUnit;

/**
 * Follows the source's replication stream and sends every position it observes to the
 * acknowledgement engine ({@code POSITION_OBSERVED}). The blocking stream runs on a worker thread of
 * its own; the heartbeat marker runs on this verticle's event loop. After every (re)connect a marker
 * is forced, so checkpoints left pending by a crash or a dropped connection are acknowledged without
 * waiting for other traffic. The verticle has started once the first connection attempt is over: on
 * success the slot exists, so every commit after that is seen; on failure readiness says why.
 *
 * <p>In custom mode a position is sent and confirmed to the slot only after the custom checkpoints
 * committed at it are durably stored; a failed store restarts the stream from the last confirmed
 * position, and the slot sends them again.
 */
public final class ReplicationFollowerVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(ReplicationFollowerVerticle.class);
  private static final long MAX_BACKOFF_MS = 5_000;
  /**
   * The engine runs where the follower runs: the head of a stream's open goes to it locally, so that
   * it comes before the stream's positions (on a clustered event bus, a message to another address
   * may wait for a lookup of the cluster's registry).
   */
  private static final DeliveryOptions HERE = new DeliveryOptions().setLocalOnly(true).addHeader(AckpointAddresses.HEAD_READ_AT_OPEN, "true");

  private final String uri;
  private final ReplicationConfig config;
  private final CustomTable customTable;
  private final PgReplicationSource source;
  private final AckpointAddresses addresses;
  private final ReplicationListener listener;
  private WorkerExecutor worker;
  /** Completes once the follower's loop has ended: its thread holds no connection any more. */
  private Future<Void> loopEnded;
  private final FollowerStop stopping = new FollowerStop();
  private volatile PgLogicalStream current;
  private long heartbeatTimer;
  private final Promise<Void> firstAttempt = Promise.promise();
  /** Whether the first attempt is over; the follower's thread's own. */
  private boolean attempted;
  private final FollowerStatus status;
  private final ReplicationFailures failures;
  private DurableCustomStore customStore;
  private MessageConsumer<Void> health;

  /** {@code customTable} is null in managed mode; {@code source} writes the heartbeat markers. */
  public ReplicationFollowerVerticle(String uri, ReplicationConfig config, CustomTable customTable,
                                     PgReplicationSource source, AckpointAddresses addresses, ReplicationListener listener) {
    this.uri = uri;
    this.config = config;
    this.customTable = customTable;
    this.source = source;
    this.addresses = addresses;
    this.listener = listener;
    this.status = new FollowerStatus("replication slot " + config.slotName(), listener);
    this.failures = new ReplicationFailures(config.slotName(), PgConnectOptions.fromUri(uri).getUser(), config.publication(),
        customTable != null);
  }

  @Override
  public Future<?> start() {
    health = vertx.eventBus().localConsumer(addresses.healthReplication(), msg -> msg.reply(status.current().toJson()));
    if (customTable != null) {
      customStore = new DurableCustomStore(vertx.eventBus(), addresses.customCheckpoints(), customTable.storeTimeout(),
          config.statusInterval());
    }
    heartbeatTimer = vertx.setPeriodic(config.heartbeatInterval().toMillis(), id -> periodicHeartbeat());
    vertx.setPeriodic(config.statusInterval().toMillis(), id -> statusTick());
    // A thread of its own, allowed to block for as long as the stream lives.
    worker = vertx.createSharedWorkerExecutor("ackpoint-replication-" + deploymentID(), 1, 365, TimeUnit.DAYS);
    loopEnded = worker.executeBlocking(() -> {
      follow();
      return null;
    }, false);
    return firstAttempt.future();
  }

  private void statusTick() {
    // How much WAL the slot holds back on the source: what an operator must watch.
    source.slotState(config.slotName()).onSuccess(listener::slotState);
    PgLogicalStream following = current;
    if (customTable != null && following != null) {
      // A custom table dropped or replaced leaves the publication (a renamed one stays, under its
      // new name), and PostgreSQL stops sending the rows of the configured name without a word; a
      // table whose key was dropped has its updates published without a replica identity, which
      // fails the application's UPDATEs; a configured column renamed or dropped leaves every row
      // without it. The stream is started again, which publishes the table of
      // that name as it now allows, or reports that there is none. Rows committed in between are
      // not published, so not seen (README, Custom checkpoint mode).
      source.publishesAsEnsured(config.publication(), customTable).onSuccess(published -> {
        if (!published && following == current) {
          LOG.warn("custom.table {} is no longer published by {} as set up (dropped, renamed or replaced, a column renamed,"
              + " or its key changed?): following again", Publication.quoted(customTable.schemaName()) + "."
              + Publication.quoted(customTable.tableName()),
              config.publication());
          vertx.executeBlocking(() -> {
            following.abort();
            return null;
          });
        }
      });
    }
  }

  private Future<Void> heartbeat() {
    return source.forceMarker().onFailure(e -> LOG.warn("heartbeat marker failed: {}", e.getMessage()));
  }

  /**
   * A marker that fails puts the stream in doubt too: one whose network is gone hears nothing and
   * fails no read before its silence limit (three heartbeats), reporting all the while that it
   * follows. It is opened again at once: where the source answers, that costs a reconnect; where it
   * does not, the reconnect fails with the reason, readiness says so, and a cluster hands the slot
   * to a node that may reach the source (Leadership). Not after the marker of a connect, which would
   * reopen the stream in a loop if the source's pool alone could not reach the source.
   */
  private void periodicHeartbeat() {
    PgLogicalStream following = current;
    heartbeat().onFailure(e -> {
      if (following != null && following == current) {
        LOG.warn("replication stream on slot {} opened again: a stream cut off looks idle until its silence limit",
            config.slotName());
        vertx.executeBlocking(() -> {
          following.abort();
          return null;
        });
      }
    });
  }

  private void follow() {
    stopping.entered();
    try {
      followUntilStopped();
    } finally {
      stopping.left();
    }
  }

  private void followUntilStopped() {
    long backoff = 100;
    boolean newSlot = false;
    while (!stopping.requested()) {
      try (PgLogicalStream stream = newSlot
          ? PgLogicalStream.openOnANewSlot(uri, config, stopping)
          : PgLogicalStream.open(uri, config, customTable, stopping)) {
        current = stream;
        newSlot = false;
        // The status first: readiness is right as soon as start() completes.
        status.following();
        // The slot exists from here on: every later commit will be seen.
        firstAttemptOver();
        // Before any position of this stream: a head before what the engine applied means that the
        // source went back (another server took over), and the engine starts over.
        vertx.eventBus().request(addresses.sourceRewound(), stream.headAtOpen(), HERE);
        context.runOnContext(v -> heartbeat());
        PgLogicalStream.Observed observed;
        while (!stopping.requested() && (observed = stream.next()) != null) {
          if (!observed.custom().isEmpty()) {
            // Blocks this worker thread until the rows are durable, or throws: the stream then
            // restarts from the last confirmed position and the slot sends them again.
            customStore.store(observed.position(), observed.custom(), stream::keepAlive);
          }
          vertx.eventBus().send(addresses.positionObserved(), observed.position());
          stream.confirm(observed.position());
          // Only a stream that delivers is a success: one that fails at its first change, every time,
          // would otherwise be opened again every 100 ms.
          backoff = 100;
        }
      } catch (SQLException | RuntimeException | Error e) {
        newSlot = customTable == null && failures.publicationDropped(e);
        // A stream aborted on purpose (stopped, or its custom table no longer published) has not failed.
        if (!stopping.requested() && (current == null || !current.aborted())) {
          if (e instanceof Error) {
            // A bug or an exhausted resource (a stack overflow), on this thread or in what it calls:
            // uncaught, it ended the thread without a word, and the node stayed ready while nothing
            // followed. Reported with its trace, and followed again as after any failure.
            status.failed("the replication follower failed: " + e, e);
          } else if (ReplicationFailures.cutOff(e)) {
            // One log line per change of cause, not per retry; readiness carries the same reason.
            status.cutOff(failures.reason(e));
          } else {
            status.failed(failures.reason(e));
          }
        }
      } finally {
        current = null;
        stopping.attemptEnded();
        // A source that is down at start does not stop Ackpoint from starting; readiness says so.
        // Here, not in the catch: nothing that goes wrong reporting a failure leaves the start waiting.
        firstAttemptOver();
      }
      if (!stopping.requested()) {
        // On the follower's own worker thread, never on an event loop; a stop ends the pause.
        stopping.pause(backoff);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  /**
   * Completes the start on the verticle's context: its listeners (the deployment's, which throws if
   * the deployment was undone meanwhile) must not run on the follower's thread.
   */
  private void firstAttemptOver() {
    if (!attempted) {
      attempted = true;
      context.runOnContext(v -> firstAttempt.tryComplete());
    }
  }

  /**
   * Completes once the follower's thread has left its loop, so no connection of the follower's (the
   * replication connection, which holds the slot, above all) outlives the undeploy: a node that
   * takes over the slot next competes with no connection of this one's (only, for a moment, with the
   * server's backend of the closed one). The stop reaches the thread wherever it blocks.
   */
  @Override
  public Future<?> stop() {
    vertx.cancelTimer(heartbeatTimer);
    health.unregister();
    return vertx.executeBlocking(() -> {
          stopping.stop();
          return null;
        })
        .eventually(() -> loopEnded)
        .andThen(ended -> status.stopped())
        .eventually(worker::close);
  }
}
