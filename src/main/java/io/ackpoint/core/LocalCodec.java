package io.ackpoint.core;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;

/**
 * Passes an immutable record between verticles of one process as it is: no JSON, no copy. The
 * internal addresses that use it are local consumers, so nothing ever goes over the wire. The codec
 * is named, not a default one, and registered once per Vert.x: several Ackpoints can share one.
 */
public final class LocalCodec<T extends Record> extends AckpointCodec<T, T> {

  private LocalCodec(Class<T> type) {
    super("ackpoint.local." + type.getName());
  }

  /** Registers the codec of {@code type} on {@code vertx} unless it is there, and answers how to send with it. */
  public static <T extends Record> DeliveryOptions register(Vertx vertx, Class<T> type) {
    LocalCodec<T> codec = new LocalCodec<>(type);
    register(vertx, codec);
    // Local only: on a clustered event bus a send is otherwise looked up in the cluster's registry
    // first (1.4 % of a node's CPU under load, async-profiler), to find nothing.
    return new DeliveryOptions().setCodecName(codec.name()).setLocalOnly(true);
  }

  @Override
  public void encodeToWire(Buffer buffer, T t) {
    throw new UnsupportedOperationException(name() + " is for local delivery only");
  }

  @Override
  public T decodeFromWire(int pos, Buffer buffer) {
    throw new UnsupportedOperationException(name() + " is for local delivery only");
  }

  @Override
  public T transform(T t) {
    return t;
  }
}
