package io.ackpoint.support;

import io.vertx.core.Future;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Blocks a test thread (never an event loop) on a future, with a bound so that a bug fails instead of hanging. */
public final class Await {

  private Await() {
  }

  public static <T> T result(Future<T> future) {
    return result(future, Duration.ofSeconds(60));
  }

  /** For a result that must come before something else would end the wait (a timeout of the code under test). */
  public static <T> T result(Future<T> future, Duration within) {
    try {
      return future.await(within.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("no result within " + within.toSeconds() + " s", e);
    }
  }
}
