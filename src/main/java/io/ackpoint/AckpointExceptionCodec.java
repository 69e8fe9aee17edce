package io.ackpoint;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageCodec;
import io.vertx.core.json.JsonObject;

/**
 * Carries an {@link AckpointException} between nodes as {@code {"code","description"}}; within one
 * node the exception itself is passed. Registered once per Vert.x instance, however many Ackpoints
 * run on it.
 */
public final class AckpointExceptionCodec implements MessageCodec<AckpointException, AckpointException> {

  static final String NAME = "ackpoint.exception";

  public static void registerOn(Vertx vertx) {
    try {
      vertx.eventBus().registerDefaultCodec(AckpointException.class, new AckpointExceptionCodec());
    } catch (IllegalStateException alreadyRegistered) {
      // another Ackpoint on this Vert.x registered it: the codec holds no state
    }
  }

  @Override
  public void encodeToWire(Buffer buffer, AckpointException e) {
    Buffer json = new JsonObject().put("code", e.code()).put("description", e.description()).toBuffer();
    buffer.appendInt(json.length()).appendBuffer(json);
  }

  @Override
  public AckpointException decodeFromWire(int pos, Buffer buffer) {
    int length = buffer.getInt(pos);
    JsonObject json = buffer.getBuffer(pos + 4, pos + 4 + length).toJsonObject();
    return AckpointError.ofCode(json.getString("code")).exception(json.getString("description"));
  }

  @Override
  public AckpointException transform(AckpointException e) {
    return e;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public byte systemCodecID() {
    return -1;
  }
}
