package io.ackpoint.ack;

import io.ackpoint.core.FullUserId;
import io.ackpoint.core.PendingCheckpoints.Pending;
import io.ackpoint.core.PositionReached;
import io.ackpoint.core.PositionReachedCodec;
import io.ackpoint.core.Reached;
import io.ackpoint.source.Lsn;
import io.ackpoint.storage.CheckpointStorage;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The engine releases a batch's pending checkpoints when a position passes their heads, whether the
 * position comes after the batch's answer or before it, and never at a position before the head.
 * Its statements never finish here: what is released does not wait for them.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 10, timeUnit = TimeUnit.SECONDS)
class AckEngineReleaseTest {

  private static final String BEFORE = "00000000/00000050";
  private static final String HEAD = "00000000/00000100";
  private static final String AFTER = "00000000/00000150";
  private static final FullUserId USER = FullUserId.of("u", "c");

  private AckEngine engine;

  @BeforeEach
  void engine(Vertx vertx) {
    PositionReachedCodec.registerOn(vertx);
    CheckpointStorage statementsNeverEnd = (CheckpointStorage) Proxy.newProxyInstance(CheckpointStorage.class.getClassLoader(),
        new Class<?>[] {CheckpointStorage.class}, (proxy, method, args) -> Promise.promise().future());
    engine = new AckEngine(vertx, statementsNeverEnd, Lsn.FORMAT, "reached", AckListener.NONE);
  }

  @Test
  void aCheckpointIsReleasedByThePositionThatPassesItsHead(Vertx vertx, VertxTestContext test) {
    vertx.eventBus().<PositionReached>consumer("reached", msg -> test.verify(() -> {
      assertTrue(msg.headers().contains(AckEngine.RELEASE_HEADER));
      assertEquals(AFTER, msg.body().position(), "not " + BEFORE + ", before the head");
      assertEquals(List.of(new Reached(USER, 7)), msg.body().reached());
      assertEquals(Lsn.FORMAT.ordinal(AFTER), msg.body().checkpoint());
      test.completeNow();
    }));
    vertx.runOnContext(v -> {
      engine.pending(List.of(new Pending(USER, 7, HEAD)));
      engine.observe(BEFORE);
      engine.observe(AFTER);
    });
  }

  @Test
  void aCheckpointWhoseHeadWasPassedBeforeItsBatchAnsweredIsReleasedAtOnce(Vertx vertx, VertxTestContext test) {
    vertx.eventBus().<PositionReached>consumer("reached", msg -> test.verify(() -> {
      assertEquals(AFTER, msg.body().position());
      assertEquals(List.of(new Reached(USER, 7)), msg.body().reached());
      test.completeNow();
    }));
    vertx.runOnContext(v -> {
      engine.observe(AFTER);
      engine.pending(List.of(new Pending(USER, 6, BEFORE), new Pending(USER, 7, HEAD)));
    });
  }
}
