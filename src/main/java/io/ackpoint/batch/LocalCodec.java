package io.ackpoint.batch;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageCodec;

/**
 * Passes an immutable record between verticles of one process as it is: no JSON, no copy. The
 * internal addresses that use it are local consumers, so nothing ever goes over the wire.
 */
final class LocalCodec<T extends Record> implements MessageCodec<T, T> {

  private final String name;

  LocalCodec(Class<T> type) {
    this.name = "ackpoint.local." + type.getSimpleName();
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
