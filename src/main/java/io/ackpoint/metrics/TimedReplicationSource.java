package io.ackpoint.metrics;

import io.ackpoint.source.ReplicationSource;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.Future;

/** A source whose head reads and markers are timed. */
public final class TimedReplicationSource implements ReplicationSource {

  private final ReplicationSource delegate;
  private final AckpointMetrics metrics;

  public TimedReplicationSource(ReplicationSource delegate, AckpointMetrics metrics) {
    this.delegate = delegate;
    this.metrics = metrics;
  }

  static <T> Future<T> timed(Timer timer, Future<T> future) {
    long start = System.nanoTime();
    return future.onComplete(ar -> timer.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS));
  }

  @Override
  public Future<String> readHead() {
    return timed(metrics.headRead(), delegate.readHead()).onSuccess(metrics::recordHead);
  }

  @Override
  public Future<Void> forceMarker() {
    return timed(metrics.marker(), delegate.forceMarker());
  }

  @Override
  public Future<Void> close() {
    return delegate.close();
  }
}
