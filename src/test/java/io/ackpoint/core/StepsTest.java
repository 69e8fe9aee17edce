package io.ackpoint.core;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;

@ExtendWith(VertxExtension.class)
class StepsTest {

  /** As many steps as a walk of a billion rows in 10,000-row windows: a nested compose overflows the stack long before. */
  @Test
  void aHundredThousandAsynchronousStepsEndWithTheLastState(Vertx vertx, VertxTestContext test) {
    vertx.runOnContext(start -> Steps.until(0, n -> n == 100_000, n -> later(vertx, n + 1))
        .onComplete(test.succeeding(last -> test.verify(() -> {
          assertEquals(100_000, last);
          test.completeNow();
        }))));
  }

  @Test
  void aFailedStepEndsTheWalk(Vertx vertx, VertxTestContext test) {
    Steps.until(0, n -> false, n -> n == 3 ? Future.failedFuture("step 3") : later(vertx, n + 1))
        .onComplete(test.failing(e -> test.verify(() -> {
          assertEquals("step 3", e.getMessage());
          test.completeNow();
        })));
  }

  private static Future<Integer> later(Vertx vertx, int value) {
    Promise<Integer> promise = Promise.promise();
    vertx.runOnContext(v -> promise.complete(value));
    return promise.future();
  }
}
