package io.ackpoint.core;

import io.vertx.core.Future;
import io.vertx.core.Promise;

import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Runs asynchronous steps one after another, each from the state the one before answered, until a
 * state is done. The steps' futures are not nested (as a recursive {@code compose} would nest them):
 * a walk of thousands of statements would otherwise complete thousands of futures inside one another
 * when its last step ends, and overflow the stack.
 */
public final class Steps {

  private Steps() {
  }

  public static <S> Future<S> until(S first, Predicate<S> done, Function<S, Future<S>> step) {
    Promise<S> result = Promise.promise();
    next(first, done, step, result);
    return result.future();
  }

  private static <S> void next(S state, Predicate<S> done, Function<S, Future<S>> step, Promise<S> result) {
    if (done.test(state)) {
      result.complete(state);
      return;
    }
    step.apply(state).onComplete(ar -> {
      if (ar.succeeded()) {
        next(ar.result(), done, step, result);
      } else {
        result.fail(ar.cause());
      }
    });
  }
}
