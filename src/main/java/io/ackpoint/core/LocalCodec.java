package io.ackpoint.core;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageCodec;

/**
 * Passes an immutable record between verticles of one process as it is: no JSON, no copy. The
 * internal addresses that use it are local consumers, so nothing ever goes over the wire. The codec
 * is named, not a default one, and registered once per Vert.x: several Ackpoints can share one.
 */
public final class LocalCodec<T extends Record> implements MessageCodec<T, T> {

  private final String name;

  private LocalCodec(Class<T> type) {
    this.name = "ackpoint.local." + type.getName();
  }

  /** Registers the codec of {@code type} on {@code vertx} unless it is there, and answers how to send with it. */
  public static <T extends Record> DeliveryOptions register(Vertx vertx, Class<T> type) {
    LocalCodec<T> codec = new LocalCodec<>(type);
    try {
      vertx.eventBus().registerCodec(codec);
    } catch (IllegalStateException alreadyRegistered) {
      // registered by another Ackpoint on this Vert.x: the codec holds no state
    }
    return new DeliveryOptions().setCodecName(codec.name);
  }

  @Override
  public void encodeToWire(Buffer buffer, T t) {
    throw new UnsupportedOperationException(name + " is for local delivery only");
  }

  @Override
  public T decodeFromWire(int pos, Buffer buffer) {
    throw new UnsupportedOperationException(name + " is for local delivery only");
  }

  @Override
  public T transform(T t) {
    return t;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public byte systemCodecID() {
    return -1;
  }
}
