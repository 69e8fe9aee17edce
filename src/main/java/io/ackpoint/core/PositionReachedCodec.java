package io.ackpoint.core;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageCodec;

/**
 * Carries a {@link PositionReached} between nodes as JSON; within a node the record itself (it is
 * immutable), so that every event loop reads the same instance and nothing is copied per stream.
 */
public final class PositionReachedCodec implements MessageCodec<PositionReached, PositionReached> {

  /** Registered once per Vert.x instance, however many Ackpoints run on it. */
  public static void registerOn(Vertx vertx) {
    try {
      vertx.eventBus().registerDefaultCodec(PositionReached.class, new PositionReachedCodec());
    } catch (IllegalStateException alreadyRegistered) {
      // another Ackpoint on this Vert.x registered it: the codec holds no state
    }
  }

  @Override
  public void encodeToWire(Buffer buffer, PositionReached reached) {
    Buffer json = reached.toJson().toBuffer();
    buffer.appendInt(json.length()).appendBuffer(json);
  }

  @Override
  public PositionReached decodeFromWire(int pos, Buffer buffer) {
    int length = buffer.getInt(pos);
    return PositionReached.fromJson(buffer.getBuffer(pos + 4, pos + 4 + length).toJsonObject());
  }

  @Override
  public PositionReached transform(PositionReached reached) {
    return reached;
  }

  @Override
  public String name() {
    return "ackpoint.position.reached";
  }

  @Override
  public byte systemCodecID() {
    return -1;
  }
}
