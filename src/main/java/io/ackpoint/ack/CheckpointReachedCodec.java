package io.ackpoint.ack;

import io.ackpoint.CheckpointReached;
import io.ackpoint.core.AckpointCodec;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;

/**
 * Sends a {@link CheckpointReached} and delivers its JSON, built for each consumer that receives it:
 * a position with thousands of users publishes one event per user, and with nobody listening none
 * of them is ever encoded. Consumers see the documented JSON body either way.
 */
final class CheckpointReachedCodec extends AckpointCodec<CheckpointReached, JsonObject> {

  private CheckpointReachedCodec() {
    super("ackpoint.checkpoint.reached");
  }

  /** Registers the codec once per Vert.x, and answers how to publish with it to this node's consumers. */
  static DeliveryOptions registerOn(Vertx vertx) {
    CheckpointReachedCodec codec = new CheckpointReachedCodec();
    register(vertx, codec);
    return new DeliveryOptions().setCodecName(codec.name()).setLocalOnly(true);
  }

  @Override
  public void encodeToWire(Buffer buffer, CheckpointReached reached) {
    writeJson(buffer, reached.toJson());
  }

  @Override
  public JsonObject decodeFromWire(int pos, Buffer buffer) {
    return readJson(pos, buffer);
  }

  @Override
  public JsonObject transform(CheckpointReached reached) {
    return reached.toJson();
  }
}
