package io.ackpoint.http;

import io.ackpoint.config.AckpointConfig.QueueLimits;
import io.vertx.core.Context;

import java.util.ArrayDeque;

/**
 * The admission queue of one route group, shared by every HTTP event loop of the process: at most
 * {@code concurrency} requests run, at most {@code maxQueueDepth} wait (each at most
 * {@code maxWait}), the rest are refused (429).
 * A finished request hands its slot straight to the oldest waiter, on that waiter's own event loop.
 */
public final class RequestQueue {

  /** What became of a request that asked to enter. */
  public enum Admission { RUNNING, QUEUED, REJECTED }

  private final String name;
  private final int concurrency;
  private final int maxQueueDepth;
  private final long maxWaitMillis;
  private final ArrayDeque<Waiter> waiting = new ArrayDeque<>();
  private int running;
  private long rejected;

  public RequestQueue(String name, QueueLimits limits) {
    this.name = name;
    this.concurrency = limits.concurrency();
    this.maxQueueDepth = limits.maxQueueDepth();
    this.maxWaitMillis = Math.max(1, limits.maxWait().toMillis());
  }

  /** How long a request waits for a slot before it is refused. */
  long maxWaitMillis() {
    return maxWaitMillis;
  }

  public String name() {
    return name;
  }

  /**
   * Runs {@code start} now, or later on {@code context} when a slot frees up. Whoever runs must
   * call {@link #release()} exactly once when the request is over.
   */
  public Admission enter(Context context, Runnable start) {
    synchronized (this) {
      if (running < concurrency) {
        running++;
      } else if (waiting.size() < maxQueueDepth) {
        waiting.add(new Waiter(context, start));
        return Admission.QUEUED;
      } else {
        rejected++;
        return Admission.REJECTED;
      }
    }
    start.run();
    return Admission.RUNNING;
  }

  public void release() {
    Waiter next;
    synchronized (this) {
      next = waiting.poll();
      if (next == null) {
        running--;
        return;
      }
    }
    // The slot passes to the waiter without being given back, so a burst cannot overtake the queue.
    next.context.runOnContext(v -> next.start.run());
  }

  /**
   * Takes back the waiter that {@link #enter} queued with {@code start}, counted as refused; false if
   * it was given a slot already (its {@code start} then runs, or ran, on its context).
   */
  public boolean withdraw(Runnable start) {
    synchronized (this) {
      if (waiting.removeIf(waiter -> waiter.start == start)) {
        rejected++;
        return true;
      }
      return false;
    }
  }

  public synchronized int running() {
    return running;
  }

  public synchronized int waiting() {
    return waiting.size();
  }

  public synchronized long rejected() {
    return rejected;
  }

  private record Waiter(Context context, Runnable start) {
  }
}
