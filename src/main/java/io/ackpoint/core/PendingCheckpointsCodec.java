package io.ackpoint.core;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/**
 * Carries a batch's {@link PendingCheckpoints} to the acknowledgement engine: as the record itself
 * on the node that runs the engine, as JSON from another node of a cluster.
 *
 * <p>A decoded batch is stamped with the receiving node's {@link System#nanoTime()}: the sender's
 * clock means nothing here. The stamp comes after the batch's commit (the sender had its answer
 * before it sent it), which is all {@code AckEngine#pending} asks of it: a statement begun after it
 * saw the batch's rows. Vert.x decodes a body from the wire when it is first read, by the engine's
 * handler on the engine's event loop, so no statement recorded there began after the stamp: the
 * engine never skips another node's checkpoints as already announced, and releases them, at worst
 * once more than needed (a message to every event loop, and on an idle database one more statement
 * within AckEngine's RECORD_MS).
 */
public final class PendingCheckpointsCodec extends AckpointCodec<PendingCheckpoints, PendingCheckpoints> {

  private static final String NAME = "ackpoint.checkpoints.pending";

  private PendingCheckpointsCodec() {
    super(NAME);
  }

  /** Registered once per Vert.x instance, before any verticle starts, however many Ackpoints run on it. */
  public static void registerOn(Vertx vertx) {
    register(vertx, new PendingCheckpointsCodec());
  }

  /**
   * How to send with the codec: within this node on a Vert.x that is not clustered, to the engine
   * wherever it runs on one that is.
   */
  public static DeliveryOptions toEngine(Vertx vertx) {
    return new DeliveryOptions().setCodecName(NAME).setLocalOnly(!vertx.isClustered());
  }

  @Override
  public void encodeToWire(Buffer buffer, PendingCheckpoints pending) {
    JsonArray checkpoints = new JsonArray();
    for (PendingCheckpoints.Pending p : pending.checkpoints()) {
      checkpoints.add(new JsonArray().add(p.user().userId()).add(p.user().clientId()).add(p.checkpoint()).add(p.head()));
    }
    writeJson(buffer, new JsonObject().put("checkpoints", checkpoints));
  }

  @Override
  public PendingCheckpoints decodeFromWire(int pos, Buffer buffer) {
    JsonArray checkpoints = readJson(pos, buffer).getJsonArray("checkpoints");
    List<PendingCheckpoints.Pending> pending = new ArrayList<>(checkpoints.size());
    for (int i = 0; i < checkpoints.size(); i++) {
      JsonArray p = checkpoints.getJsonArray(i);
      pending.add(new PendingCheckpoints.Pending(new FullUserId(p.getString(0), p.getString(1)), p.getLong(2), p.getString(3)));
    }
    return new PendingCheckpoints(pending, System.nanoTime());
  }

  @Override
  public PendingCheckpoints transform(PendingCheckpoints pending) {
    return pending;
  }
}
