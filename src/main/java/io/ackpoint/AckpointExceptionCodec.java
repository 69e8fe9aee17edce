package io.ackpoint;

import io.ackpoint.core.AckpointCodec;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;

/**
 * Carries an {@link AckpointException} between nodes as {@code {"code","description"}}; within one
 * node the exception itself is passed. Registered once per Vert.x instance, however many Ackpoints
 * run on it.
 */
public final class AckpointExceptionCodec extends AckpointCodec<AckpointException, AckpointException> {

  static final String NAME = "ackpoint.exception";

  private AckpointExceptionCodec() {
    super(NAME);
  }

  public static void registerOn(Vertx vertx) {
    registerDefault(vertx, AckpointException.class, new AckpointExceptionCodec());
  }

  @Override
  public void encodeToWire(Buffer buffer, AckpointException e) {
    writeJson(buffer, new JsonObject().put("code", e.code()).put("description", e.description()));
  }

  @Override
  public AckpointException decodeFromWire(int pos, Buffer buffer) {
    JsonObject json = readJson(pos, buffer);
    return AckpointError.ofCode(json.getString("code")).exception(json.getString("description"));
  }

  @Override
  public AckpointException transform(AckpointException e) {
    return e;
  }
}
