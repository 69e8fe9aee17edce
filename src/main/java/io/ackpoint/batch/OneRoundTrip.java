package io.ackpoint.batch;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.HeadedBatch;
import io.ackpoint.storage.HeadStoringWriter;
import io.vertx.core.Future;

import java.util.List;

/**
 * Source and storage are one PostgreSQL database: head, rows and marker in one round trip (see
 * {@link HeadStoringWriter}). The storage timer then covers all three.
 */
final class OneRoundTrip implements BatchWriter {

  /** The head of a part that stored nothing: before every position, so any stored part's head stands for both. */
  private static final String NO_HEAD = "";

  private final IsolatingWriter<HeadedBatch> storage;
  private final BatchListener listener;

  OneRoundTrip(HeadStoringWriter storage, BatchListener listener) {
    // A batch split because of a rejected write: each part has its own head and marker.
    this.storage = new IsolatingWriter<>(storage::storeAtCurrentHead, HeadedBatch::plus, rejected -> new HeadedBatch(NO_HEAD, rejected));
    this.listener = listener;
  }

  @Override
  public Future<HeadedBatch> write(List<CheckpointWrite> writes) {
    long started = System.nanoTime();
    return storage.write(writes).onSuccess(batch -> {
      if (!batch.head().equals(NO_HEAD)) {
        listener.stored(batch.head(), System.nanoTime() - started);
      }
      if (batch.marker() != null) {
        listener.acknowledgedAt(batch.marker());
      } else if (batch.stored().shouldAdvance()) {
        listener.acknowledgedAlready();
      }
    });
  }
}
