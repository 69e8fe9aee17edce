package io.ackpoint.batch;

import io.ackpoint.core.PositionFormat;
import io.ackpoint.source.ReplicationSource;
import io.vertx.core.Future;

/** The source as the batcher uses it: each head read and marker reported to the listener. */
final class ObservedSource implements ReplicationSource {

  private final ReplicationSource delegate;
  private final BatchListener listener;

  ObservedSource(ReplicationSource delegate, BatchListener listener) {
    this.delegate = delegate;
    this.listener = listener;
  }

  @Override
  public PositionFormat positions() {
    return delegate.positions();
  }

  @Override
  public boolean headsOrdered() {
    return delegate.headsOrdered();
  }

  @Override
  public Future<String> readHead() {
    long started = System.nanoTime();
    return delegate.readHead().onSuccess(head -> listener.headRead(head, System.nanoTime() - started));
  }

  @Override
  public Future<Void> forceMarker() {
    long started = System.nanoTime();
    return delegate.forceMarker().onSuccess(v -> listener.markerForced(System.nanoTime() - started));
  }
}
