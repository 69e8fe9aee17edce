package io.ackpoint.ack;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.AckpointException;
import io.ackpoint.CheckpointReached;
import io.ackpoint.config.AckpointConfig.AcknowledgementConfig;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.LocalCodec;
import io.ackpoint.core.PositionReached;
import io.ackpoint.core.Reached;
import io.ackpoint.source.ReplicationSource;
import io.ackpoint.storage.AcknowledgementHistory;
import io.ackpoint.storage.CheckpointStorage;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Acknowledgements on this node: hears every applied position (from this node's engine or the one
 * of the node that follows replication, {@link AckEngineVerticle}), reads back from storage what it
 * missed ({@link MissedAnnouncements}), remembers what was released ahead of storage until it is
 * recorded ({@link ReleasedAhead}), passes on to the node's event loops what this node's engine did
 * not tell them itself, publishes {@code ackpoint.checkpoint.reached} to this node's consumers, and
 * answers the HTTP verticles' questions about the latest acknowledged checkpoint of a
 * user and about the legacy head wait. Every node of a cluster runs one.
 */
public final class AckVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(AckVerticle.class);

  /** Marks an announcement this node read back from storage: it tells only this node's streams and consumers. */
  private static final String READ_BACK_HEADER = "ackpoint-read-back";

  private final CheckpointStorage storage;
  private final ReplicationSource source;
  private final AcknowledgementConfig config;
  private final AcknowledgementHistory history;
  private final AckpointAddresses addresses;
  private HeadWaiters heads;
  /** The latest read of the floor: the first is started with the verticle, another if it failed. */
  private Future<Long> floorRead;
  private boolean floorRetried;
  private MissedAnnouncements missed;
  private final ReleasedAhead releasedAhead = new ReleasedAhead();
  private DeliveryOptions toLocalConsumers;
  private DeliveryOptions toEventLoops;
  private String origin;

  public AckVerticle(CheckpointStorage storage, AcknowledgementHistory history, ReplicationSource source,
                     AcknowledgementConfig config, AckpointAddresses addresses) {
    this.storage = storage;
    this.history = history;
    this.source = source;
    this.config = config;
    this.addresses = addresses;
  }

  @Override
  public Future<?> start() {
    heads = new HeadWaiters(vertx);
    // Read now, not awaited: a source that is down at start fails the read, and it is read again.
    floorRead = readFloor();
    toLocalConsumers = CheckpointReachedCodec.registerOn(vertx);
    toEventLoops = LocalCodec.register(vertx, PositionReached.class);
    origin = NodeOrigin.of(vertx);
    missed = new MissedAnnouncements(vertx, history, this::readBack);
    // Awaited, so that no stream of this node opens before it: a checkpoint marked after a stream
    // read storage must be after the position the node counts from. A failed read leaves the node
    // counting from its first announcement.
    Future<Void> counting = history.latestProcessed().onSuccess(missed::startFrom)
        .onFailure(e -> LOG.warn("could not read the latest acknowledgement at start ({}): until this node hears one,"
            + " an acknowledgement it missed is not read back", e.getMessage()))
        .<Void>mapEmpty().otherwiseEmpty();
    var bus = vertx.eventBus();
    return Future.all(counting,
        bus.<PositionReached>consumer(addresses.positionReached(), msg -> {
          // The node's only consumer of positions: it passes on to the node's event loops, as it
          // was decoded, what they have not heard from this node's own engine (other nodes'
          // positions; its read-backs it passes on itself, see readBack). A message from another
          // node is decoded once for every consumer it reaches there (JSON, thousands of users),
          // which was once per event loop (async-profiler on a node that does not follow,
          // 2026-12-03, the follower's node loaded alone: decoding 9.9 % of its CPU samples before,
          // 4.5 % after). Queued for the event loops before this verticle tells each user's consumers.
          if (NodeOrigin.isOwnCopyForOthers(origin, msg.headers())) {
            return;
          }
          if (!NodeOrigin.is(origin, msg.headers())) {
            bus.publish(addresses.positionHeard(), msg.body(), toEventLoops);
          }
          if (msg.headers().contains(PositionReached.RELEASE_HEADER)) {
            releasedAhead.released(msg.body().reached(), msg.body().checkpoint(), StatementNumber.of(msg.headers()));
            return;
          }
          releasedAhead.recorded(msg.body().reached(), StatementNumber.of(msg.headers()));
          AnnouncingEngine engine = AnnouncingEngine.of(msg.headers());
          if (msg.headers().contains(READ_BACK_HEADER)) {
            heads.told(msg.body().checkpoint());
          } else {
            missed.heard(msg.body(), engine);
            heads.reached(msg.body().position(), msg.body().checkpoint(), engine == null ? null : engine.id());
          }
          reached(msg.body());
        }).completion(),
        bus.<JsonObject>localConsumer(addresses.checkpointLatest(), this::latest).completion(),
        bus.localConsumer(addresses.headMark(), this::markHead).completion(),
        bus.<JsonObject>localConsumer(addresses.headAwait(), this::awaitHead).completion());
  }

  /**
   * A position was applied, here or on the node that follows replication: waits for heads before it
   * are over, and each of its users is told on {@code ackpoint.checkpoint.reached}, to this node's
   * consumers only (every node tells its own, so each consumer hears it once).
   */
  private void reached(PositionReached reached) {
    for (Reached r : reached.reached()) {
      vertx.eventBus().publish(addresses.checkpointReached(),
          new CheckpointReached(r.user(), r.writeCheckpoint(), reached.position(), reached.checkpoint()), toLocalConsumers);
    }
  }

  /**
   * A position read back: this node's event loops hear every user of it (their streams keep the
   * greatest id, and an announcement may have reached this verticle and not them), and then this
   * verticle, as an announcement of its own node (so as not to pass it on to the event loops again),
   * tells consumers the users no announcement told them.
   */
  private void readBack(MissedAnnouncements.ReadBack readBack) {
    long sequence = readBackSequence(readBack.position());
    vertx.eventBus().publish(addresses.positionHeard(), new PositionReached(readBack.position(), sequence, readBack.users(), ""),
        toEventLoops);
    vertx.eventBus().publish(addresses.positionReached(), new PositionReached(readBack.position(), sequence, readBack.notTold(), ""),
        new DeliveryOptions().setLocalOnly(true).addHeader(READ_BACK_HEADER, "true").addHeader(NodeOrigin.HEADER, origin));
  }

  /**
   * The sequence a position read back is told at: at least its ordinal, as the engine that applied
   * it numbered it ({@link Checkpoints}), so that nobody is told "acknowledged at S" with S before
   * the head of their write (the node's own sequence may be far behind what it missed); and at
   * least the node's own, so that its sequence never goes back.
   */
  private long readBackSequence(String position) {
    return Math.max(heads.checkpoint(), source.positions().ordinal(position));
  }

  private void latest(Message<JsonObject> msg) {
    FullUserId user = new FullUserId(msg.body().getString("user_id"), msg.body().getString("client_id"));
    AckpointException.reply(msg, floor().compose(floor -> {
      // The sequence and the release are taken before the read: the stream subscribed before
      // asking, so an acknowledgement newer than the read reaches it with its own, later, sequence.
      ReleasedAhead.Release released = releasedAhead.of(user);
      long checkpoint = Math.max(floor, heads.checkpoint());
      return storage.latestAcknowledged(user).map(acknowledged -> {
        Long stored = acknowledged == null ? null : acknowledged.writeCheckpoint();
        Long latest = stored;
        // At least the ordinal of where the id was marked processed: a node that has not heard that
        // position yet (a failover, a split healing) would otherwise pair the id with a sequence
        // before the head of its write.
        long sequence = acknowledged == null ? checkpoint : Math.max(checkpoint, ordinal(acknowledged.position()));
        if (released != null && (stored == null || stored < released.writeCheckpoint())) {
          latest = released.writeCheckpoint();
          sequence = Math.max(sequence, released.checkpoint());
        }
        JsonObject reply = new JsonObject().put("checkpoint", Long.toString(sequence));
        if (latest != null) {
          reply.put("write_checkpoint", Long.toString(latest));
        }
        return reply;
      });
    }));
  }

  /** The ordinal of a position storage holds, 0 when there is none or it is no position of this source (edited by hand). */
  private long ordinal(String stored) {
    String position = stored == null ? null : source.positions().canonical(stored);
    return position == null ? 0 : source.positions().ordinal(position);
  }

  /**
   * The least checkpoint sequence a stream of this node opens with: the ordinal of the source's
   * head when the node started. Until the node hears its first position its own sequence is 0, and
   * a client that reconnects right after a restart would be told a sequence far below the one it
   * was told before. Every position replicated before the start is at or before that head, and the
   * sequence of a position is at least its ordinal, so no stream is told less than it was before.
   * Positions a lagging follower applies later may still number below the floor; each stream keeps
   * its own sequence from going back ({@code AckStream}).
   */
  private Future<Long> floor() {
    if (floorRead.failed()) {
      floorRead = readFloor();
      floorRetried = true;
    }
    // Only the first read is waited for. Once the source failed it, reads go on in the background
    // and meanwhile no stream waits for the source (storage alone answers), at the cost of the floor.
    return floorRetried && !floorRead.isComplete() ? Future.succeededFuture(0L) : floorRead.otherwise(0L);
  }

  private Future<Long> readFloor() {
    return source.readHead().map(head -> source.positions().ordinal(head));
  }

  /**
   * The legacy route's head, and a marker after it. A head before a position applied when it was
   * asked for means that the source went back (see {@code SourceRewinds}): that position passes
   * nothing of the new source's, and the engine is asked to start over.
   */
  private void markHead(Message<Object> msg) {
    String applied = heads.reached();
    String appliedBy = heads.engine();
    AckpointException.reply(msg, source.readHead()
        .onSuccess(head -> {
          if (source.headsOrdered() && head.compareTo(applied) < 0) {
            LOG.warn(ReplicationSource.wentBack(applied, head));
            heads.rewound(appliedBy);
            vertx.eventBus().request(addresses.sourceRewound(), head);
          }
        })
        .compose(head -> source.forceMarker().map(head))
        .map(head -> new JsonObject().put("head", head)));
  }

  private void awaitHead(Message<JsonObject> msg) {
    AckpointException.reply(msg, heads.await(msg.body().getString("head"), config.legacyTimeout())
        .map(checkpoint -> new JsonObject().put("checkpoint", Long.toString(checkpoint))));
  }
}
