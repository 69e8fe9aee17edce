package io.ackpoint.core;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;

/**
 * Carries a {@link PositionReached} between nodes as JSON; within a node the record itself (it is
 * immutable), so that nothing is copied per consumer or per stream. A node decodes each message
 * once: its acknowledgement verticle is the only consumer of the address it travels on.
 */
public final class PositionReachedCodec extends AckpointCodec<PositionReached, PositionReached> {

  private PositionReachedCodec() {
    super("ackpoint.position.reached");
  }

  /** Registered once per Vert.x instance, however many Ackpoints run on it. */
  public static void registerOn(Vertx vertx) {
    registerDefault(vertx, PositionReached.class, new PositionReachedCodec());
  }

  @Override
  public void encodeToWire(Buffer buffer, PositionReached reached) {
    writeJson(buffer, reached.toJson());
  }

  @Override
  public PositionReached decodeFromWire(int pos, Buffer buffer) {
    return PositionReached.fromJson(readJson(pos, buffer));
  }

  @Override
  public PositionReached transform(PositionReached reached) {
    return reached;
  }
}
