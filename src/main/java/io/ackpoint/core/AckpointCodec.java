package io.ackpoint.core;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageCodec;
import io.vertx.core.json.JsonObject;

/**
 * What Ackpoint's event-bus codecs share: a fixed name, no system codec id, JSON on the wire, and a
 * registration that tolerates another Ackpoint on the same Vert.x having made it first (the codecs
 * hold no state, so the first one registered serves every instance).
 */
public abstract class AckpointCodec<S, R> implements MessageCodec<S, R> {

  private final String name;

  protected AckpointCodec(String name) {
    this.name = name;
  }

  /** Registers {@code codec} by its name, once per Vert.x. */
  public static void register(Vertx vertx, AckpointCodec<?, ?> codec) {
    try {
      vertx.eventBus().registerCodec(codec);
    } catch (IllegalStateException alreadyRegistered) {
      // another Ackpoint on this Vert.x registered it
    }
  }

  /** Registers {@code codec} as the one for every body of {@code type}, once per Vert.x. */
  public static <T> void registerDefault(Vertx vertx, Class<T> type, AckpointCodec<T, ?> codec) {
    try {
      vertx.eventBus().registerDefaultCodec(type, codec);
    } catch (IllegalStateException alreadyRegistered) {
      // another Ackpoint on this Vert.x registered it
    }
  }

  /** Appends {@code json} to {@code buffer}, length first. */
  protected static void writeJson(Buffer buffer, JsonObject json) {
    Buffer encoded = json.toBuffer();
    buffer.appendInt(encoded.length()).appendBuffer(encoded);
  }

  /** The JSON object {@link #writeJson} appended at {@code pos}. */
  protected static JsonObject readJson(int pos, Buffer buffer) {
    int length = buffer.getInt(pos);
    return buffer.getBuffer(pos + 4, pos + 4 + length).toJsonObject();
  }

  @Override
  public final String name() {
    return name;
  }

  @Override
  public final byte systemCodecID() {
    return -1;
  }
}
