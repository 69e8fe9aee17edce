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
      dumpThreads();
      throw new AssertionError("no result within " + within.toSeconds() + " s (the threads are dumped to stderr)", e);
    }
  }

  /**
   * What each thread was doing when a wait gave up: a hang seen once in CI (a close after a fault)
   * is then explained by its own log, since it may not come again here.
   */
  private static void dumpThreads() {
    StringBuilder dump = new StringBuilder("Threads when a wait gave up:\n");
    Thread.getAllStackTraces().forEach((thread, stack) -> {
      dump.append('"').append(thread.getName()).append("\" ").append(thread.getState()).append('\n');
      for (StackTraceElement frame : stack) {
        dump.append("    at ").append(frame).append('\n');
      }
    });
    System.err.print(dump);
  }
}
