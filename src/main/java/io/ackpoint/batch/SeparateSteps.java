package io.ackpoint.batch;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.HeadedBatch;
import io.ackpoint.core.StoredBatch;
import io.ackpoint.source.ReplicationSource;
import io.ackpoint.storage.CheckpointWriter;
import io.vertx.core.Future;

import java.util.List;

/**
 * Any source with any storage: the head read from the source, the batch stored, then the marker
 * written to the source, each its own round trip (see {@link ReplicationSource#createReplicationHead}).
 */
final class SeparateSteps implements BatchWriter {

  private final ReplicationSource source;
  private final CheckpointWriter storage;
  private final BatchListener listener;

  SeparateSteps(ReplicationSource source, CheckpointWriter storage, BatchListener listener) {
    this.source = new ObservedSource(source, listener);
    this.storage = storage;
    this.listener = listener;
  }

  /** A batch split because of a rejected write keeps its one head and its one marker. */
  @Override
  public Future<HeadedBatch> write(List<CheckpointWrite> writes) {
    return source.createReplicationHead(head -> {
      long started = System.nanoTime();
      IsolatingWriter<StoredBatch> isolating = new IsolatingWriter<>(part -> storage.store(head, part), StoredBatch::plus,
          rejected -> rejected);
      return isolating.write(writes).map(stored -> {
        listener.stored(head, System.nanoTime() - started);
        if (stored.shouldAdvance()) {
          listener.pendingSince(head);
        }
        return new HeadedBatch(head, stored);
      });
    });
  }
}
