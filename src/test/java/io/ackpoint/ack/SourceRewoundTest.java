package io.ackpoint.ack;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.core.PositionReachedCodec;
import io.ackpoint.core.Reached;
import io.ackpoint.source.Lsn;
import io.ackpoint.storage.CheckpointStorage;
import io.ackpoint.support.Await;
import io.ackpoint.support.LogCapture;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.reflect.Proxy;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The engine's side of a source that went back: a head before what it applied starts a new engine,
 * once; the same rewind told again by a batch, at a head of the new source read before the new
 * engine went beyond it, starts none; a later rewind found by the follower starts another.
 */
@ExtendWith(VertxExtension.class)
class SourceRewoundTest {

  private static final String OLD_SERVER = "00000000/04000000";
  private static final String NEW_SERVER_AT_OPEN = "00000000/01900000";
  private static final String NEW_SERVER_MARKER = "00000000/01900300";
  private static final String NEW_SERVER_BATCH = "00000000/01900200";
  private static final String NEW_SERVER_LATER = "00000000/03000000";
  private static final String THIRD_SERVER_AT_OPEN = "00000000/02000000";

  @Test
  void oneRewindToldByTheFollowerThenByABatchStartsOneEngine(Vertx vertx) {
    PositionReachedCodec.registerOn(vertx);
    AckpointAddresses addresses = new AckpointAddresses("rewound");
    try (LogCapture log = LogCapture.of(AckEngineVerticle.class.getName())) {
      Await.result(vertx.deployVerticle(new AckEngineVerticle(storageThatMarksNothing(), Lsn.FORMAT, AckListener.NONE, addresses)));
      EventBus bus = vertx.eventBus();
      // Each message reaches the engine's verticle in the order sent; a request's answer says it was handled.
      bus.send(addresses.positionObserved(), OLD_SERVER);
      Await.result(bus.request(addresses.sourceRewound(), NEW_SERVER_AT_OPEN));
      assertEquals(1, log.messages("WARN").size(), "a head before what the engine applied: " + log.messages("WARN"));
      bus.send(addresses.positionObserved(), NEW_SERVER_MARKER);
      Await.result(bus.request(addresses.sourceRewound(), NEW_SERVER_BATCH));
      assertEquals(1, log.messages("WARN").size(), "the same rewind, told by a batch of the new server: " + log.messages("WARN"));

      // The new server is replaced in turn by one behind it, though not behind the first rewind's
      // head: the follower's head, read as it opens its stream there, is a rewind all the same.
      bus.send(addresses.positionObserved(), NEW_SERVER_LATER);
      Await.result(bus.request(addresses.sourceRewound(), THIRD_SERVER_AT_OPEN,
          new DeliveryOptions().addHeader(AckpointAddresses.HEAD_READ_AT_OPEN, "true")));
      assertEquals(2, log.messages("WARN").size(), "a second rewind, found by the follower: " + log.messages("WARN"));
    }
  }

  /**
   * Storage whose every acknowledgement statement succeeds and marks nothing: what is told here is
   * which engines start, not what they mark (the engines that stop without a last statement would
   * otherwise leave statements to a pool that closes with the test's Vert.x).
   */
  private static CheckpointStorage storageThatMarksNothing() {
    return (CheckpointStorage) Proxy.newProxyInstance(CheckpointStorage.class.getClassLoader(), new Class<?>[] {CheckpointStorage.class},
        (proxy, method, args) -> switch (method.getName()) {
          case "markProcessed" -> Future.succeededFuture(List.<Reached>of());
          case "mayHaveMarked" -> false;
          default -> throw new UnsupportedOperationException(method.getName());
        });
  }
}
