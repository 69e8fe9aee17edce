package io.ackpoint.ack;

import io.ackpoint.core.PositionReached;
import io.ackpoint.core.PositionReachedCodec;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Under load a position comes with every batch: the engine starts a statement no sooner than the
 * spacing after the last one began, and then applies the latest position, for all those that came
 * meanwhile. A position after a quiet spell is applied at once, and a clean stop does not wait for
 * the spacing.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 10, timeUnit = TimeUnit.SECONDS)
class AckEngineSpacingTest {

  private static final String FIRST = "00000000/00000100";
  private static final String SECOND = "00000000/00000150";
  private static final String THIRD = "00000000/00000200";
  private static final long NEVER = TimeUnit.HOURS.toMillis(1);

  private final List<String> statements = new ArrayList<>();

  @BeforeEach
  void codec(Vertx vertx) {
    PositionReachedCodec.registerOn(vertx);
  }

  @Test
  void aPositionAfterAQuietSpellIsAppliedAtOnce(Vertx vertx, VertxTestContext test) {
    AckEngine engine = AckEngineReleaseTest.recordingNobody(vertx, statements, NEVER, NEVER);
    onRecorded(vertx, position -> test.verify(() -> {
      assertEquals(List.of(FIRST), statements);
      test.completeNow();
    }), () -> engine.observe(FIRST));
  }

  @Test
  void positionsObservedSoonAfterAStatementBeganAreAppliedTogetherOnceTheSpacingHasPassed(Vertx vertx, VertxTestContext test) {
    long spacingMs = 200;
    AckEngine engine = AckEngineReleaseTest.recordingNobody(vertx, statements, NEVER, spacingMs);
    long[] firstObserved = new long[1];
    onRecorded(vertx, position -> {
      if (position.equals(FIRST)) {
        engine.observe(SECOND);
        engine.observe(THIRD);
      } else {
        test.verify(() -> {
          assertEquals(List.of(FIRST, THIRD), statements, "one statement for the positions that came within the spacing");
          long apart = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - firstObserved[0]);
          assertTrue(apart >= spacingMs, "the second statement waited for the spacing: " + apart + " ms");
        });
        test.completeNow();
      }
    }, () -> {
      firstObserved[0] = System.nanoTime();
      engine.observe(FIRST);
    });
  }

  @Test
  void aCleanStopAppliesAPositionThatWaitsForTheSpacing(Vertx vertx, VertxTestContext test) {
    AckEngine engine = AckEngineReleaseTest.recordingNobody(vertx, statements, NEVER, NEVER);
    onRecorded(vertx, position -> {
      if (position.equals(FIRST)) {
        engine.observe(SECOND);
        engine.stop().onComplete(test.succeeding(stopped -> test.verify(() -> {
          assertEquals(List.of(FIRST, SECOND), statements);
          test.completeNow();
        })));
      }
    }, () -> engine.observe(FIRST));
  }

  /** Calls {@code recorded} with the position of each statement's announcement; {@code then} once it listens. */
  private static void onRecorded(Vertx vertx, Consumer<String> recorded, Runnable then) {
    vertx.runOnContext(v -> vertx.eventBus().<PositionReached>consumer("reached", msg -> {
      if (!msg.headers().contains(PositionReached.RELEASE_HEADER)) {
        recorded.accept(msg.body().position());
      }
    }).completion().onSuccess(registered -> then.run()));
  }
}
