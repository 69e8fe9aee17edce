package io.ackpoint.batch;

import io.vertx.core.Future;
import io.vertx.core.Promise;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Calls to a controllable fake: each call returns a future the test completes when it chooses, and
 * the test awaits calls with {@link #next()}. Used on one event loop only.
 */
final class Calls<A, R> {

  record Call<A, R>(A argument, Promise<R> result) {
  }

  private final Deque<Call<A, R>> unclaimed = new ArrayDeque<>();
  private final Deque<Promise<Call<A, R>>> waiters = new ArrayDeque<>();
  private int count;

  Future<R> call(A argument) {
    count++;
    Call<A, R> call = new Call<>(argument, Promise.promise());
    Promise<Call<A, R>> waiter = waiters.poll();
    if (waiter != null) {
      waiter.complete(call);
    } else {
      unclaimed.add(call);
    }
    return call.result().future();
  }

  /** The oldest call not yet claimed by the test, now or when it happens. */
  Future<Call<A, R>> next() {
    Call<A, R> call = unclaimed.poll();
    if (call != null) {
      return Future.succeededFuture(call);
    }
    Promise<Call<A, R>> waiter = Promise.promise();
    waiters.add(waiter);
    return waiter.future();
  }

  int count() {
    return count;
  }
}
