package io.ackpoint.support;

import io.vertx.core.Future;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Blocks a test thread (never an event loop) on a future, with a bound so that a bug fails instead of hanging. */
public final class Await {

  private Await() {
  }

  public static <T> T result(Future<T> future) {
    try {
      return future.await(60, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("no result within 60 s", e);
    }
  }
}
