package io.ackpoint.ack;

import io.ackpoint.CheckpointReached;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageCodec;
import io.vertx.core.json.JsonObject;

/**
 * Sends a {@link CheckpointReached} and delivers its JSON, built for each consumer that receives it:
 * a position with thousands of users publishes one event per user, and with nobody listening none
 * of them is ever encoded. Consumers see the documented JSON body either way. Registered once per
 * Vert.x instance, however many Ackpoints run on it.
 */
final class CheckpointReachedCodec implements MessageCodec<CheckpointReached, JsonObject> {

  static final String NAME = "ackpoint.checkpoint.reached";

  /** Registers the codec on {@code vertx} unless it is there, and answers how to publish with it, to this node's consumers. */
  static DeliveryOptions registerOn(Vertx vertx) {
    try {
      vertx.eventBus().registerCodec(new CheckpointReachedCodec());
    } catch (IllegalStateException alreadyRegistered) {
      // another Ackpoint on this Vert.x registered it: the codec holds no state
    }
    return new DeliveryOptions().setCodecName(NAME).setLocalOnly(true);
  }

  @Override
  public void encodeToWire(Buffer buffer, CheckpointReached reached) {
    reached.toJson().writeToBuffer(buffer);
  }

  @Override
  public JsonObject decodeFromWire(int pos, Buffer buffer) {
    JsonObject json = new JsonObject();
    json.readFromBuffer(pos, buffer);
    return json;
  }

  @Override
  public JsonObject transform(CheckpointReached reached) {
    return reached.toJson();
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
