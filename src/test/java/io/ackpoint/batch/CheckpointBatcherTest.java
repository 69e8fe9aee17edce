package io.ackpoint.batch;

import io.ackpoint.AckpointException;
import io.ackpoint.source.ReplicationSource;
import io.ackpoint.storage.CheckpointWrite;
import io.ackpoint.storage.CheckpointWriter;
import io.ackpoint.storage.StoredBatch;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SPEC section 3, with a source and a storage whose every answer the test controls. */
@ExtendWith(VertxExtension.class)
class CheckpointBatcherTest {

  private static final String HEAD = "00000000/0000A000";

  private final Calls<Void, String> heads = new Calls<>();
  private final Calls<List<CheckpointWrite>, StoredBatch> stores = new Calls<>();
  private final Calls<Void, Void> markers = new Calls<>();
  private final List<String> order = new ArrayList<>();
  private Context context;

  private final ReplicationSource source = new ReplicationSource() {
    @Override
    public Future<String> readHead() {
      order.add("head");
      return heads.call(null);
    }

    @Override
    public Future<Void> forceMarker() {
      order.add("marker");
      return markers.call(null);
    }

    @Override
    public Future<Void> close() {
      return Future.succeededFuture();
    }
  };

  private final CheckpointWriter storage = (head, writes) -> {
    order.add("store@" + head);
    return stores.call(writes);
  };

  @BeforeEach
  void context(Vertx vertx) {
    context = vertx.getOrCreateContext();
  }

  private CheckpointBatcher batcher(boolean batching) {
    return new CheckpointBatcher(context, source, storage, 3, batching, CheckpointBatcher.BatchListener.NONE);
  }

  /** What a storage answers for writes when every stored id is {@code id} and the rows are pending or not. */
  private static StoredBatch stored(List<CheckpointWrite> writes, long id, boolean pending) {
    Map<String, Long> ids = new HashMap<>();
    writes.forEach(w -> ids.put(w.userId(), id));
    return new StoredBatch(ids, pending);
  }

  @Test
  void requestsOfOneLoopTurnFormOneBatch(VertxTestContext test) {
    List<Future<CheckpointCreated>> results = new ArrayList<>();
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(true);
      for (int i = 0; i < 50; i++) {
        results.add(batcher.submit(CheckpointCommand.generated("user-" + i)));
      }
      heads.next().onComplete(test.succeeding(head -> {
        head.result().complete(HEAD);
        stores.next().onComplete(test.succeeding(store -> {
          test.verify(() -> assertEquals(50, store.argument().size()));
          store.result().complete(stored(store.argument(), 1, true));
          markers.next().onComplete(test.succeeding(marker -> marker.result().complete()));
        }));
      }));
      Future.all(results).onComplete(test.succeeding(all -> test.verify(() -> {
        assertEquals(1, heads.count());
        assertEquals(1, stores.count());
        assertEquals(1, markers.count());
        results.forEach(r -> assertEquals(new CheckpointCreated(1, HEAD), r.result()));
        test.completeNow();
      })));
    });
  }

  @Test
  void aFourthBatchWaitsUntilOneOfThreeCompletes(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(true);
      // Three batches, each started in its own loop turn (after the previous one read its head).
      batcher.submit(CheckpointCommand.generated("a"));
      heads.next().compose(first -> {
        batcher.submit(CheckpointCommand.generated("b"));
        return heads.next().compose(second -> {
          batcher.submit(CheckpointCommand.generated("c"));
          return heads.next().map(third -> List.of(first, second, third));
        });
      }).onComplete(test.succeeding(three -> {
        Future<CheckpointCreated> fourth = batcher.submit(CheckpointCommand.generated("d"));
        Future<CheckpointCreated> fifth = batcher.submit(CheckpointCommand.generated("e"));
        test.verify(() -> {
          assertEquals(3, batcher.inFlight());
          assertEquals(2, batcher.pending());
          assertEquals(3, heads.count());
        });
        three.get(0).result().complete(HEAD);
        stores.next().onComplete(test.succeeding(store -> {
          store.result().complete(stored(store.argument(), 1, false));
          heads.next().onComplete(test.succeeding(next -> test.verify(() -> {
            // d and e waited together and now run as one batch.
            assertEquals(4, heads.count());
            assertEquals(0, batcher.pending());
            assertFalse(fourth.isComplete() || fifth.isComplete());
            test.completeNow();
          })));
        }));
      }));
    });
  }

  @Test
  void aBatchWhoseStorageSaysNothingIsPendingForcesNoMarker(VertxTestContext test) {
    context.runOnContext(v -> {
      Future<CheckpointCreated> result = batcher(true).submit(CheckpointCommand.requested("u/c", 5));
      heads.next().onComplete(test.succeeding(head -> head.result().complete(HEAD)));
      stores.next().onComplete(test.succeeding(store -> store.result().complete(stored(store.argument(), 7, false))));
      result.onComplete(test.succeeding(created -> test.verify(() -> {
        assertEquals(7, created.writeCheckpoint());
        assertEquals(0, markers.count());
        assertEquals(List.of("head", "store@" + HEAD), order);
        test.completeNow();
      })));
    });
  }

  @Test
  void theMarkerComesAfterStorageAndTheAnswerAfterTheMarker(VertxTestContext test) {
    context.runOnContext(v -> {
      Future<CheckpointCreated> result = batcher(true).submit(CheckpointCommand.requested("u/c", 5));
      heads.next().onComplete(test.succeeding(head -> head.result().complete(HEAD)));
      stores.next().onComplete(test.succeeding(store -> store.result().complete(stored(store.argument(), 5, true))));
      markers.next().onComplete(test.succeeding(marker -> test.verify(() -> {
        assertEquals(List.of("head", "store@" + HEAD, "marker"), order);
        assertFalse(result.isComplete(), "answered before the marker was written");
        marker.result().complete();
      })));
      result.onComplete(test.succeeding(created -> test.completeNow()));
    });
  }

  @Test
  void entriesCollapsePerFullUserIdAndTheGreatestSuppliedIdWins(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(true);
      batcher.submit(CheckpointCommand.requested("u1/c", 3));
      batcher.submit(CheckpointCommand.generated("u1/c"));
      batcher.submit(CheckpointCommand.requested("u1/c", 9));
      batcher.submit(CheckpointCommand.requested("u1/c", 4));
      batcher.submit(CheckpointCommand.generated("u2"));
      batcher.submit(CheckpointCommand.generated("u2"));
      heads.next().onComplete(test.succeeding(head -> head.result().complete(HEAD)));
      stores.next().onComplete(test.succeeding(store -> test.verify(() -> {
        assertEquals(List.of(CheckpointWrite.requested("u1/c", 9), CheckpointWrite.generated("u2")), store.argument());
        test.completeNow();
      })));
    });
  }

  @Test
  void aStorageErrorFailsEveryRequestOfTheBatchWithoutRetry(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(true);
      List<Future<CheckpointCreated>> results = List.of(
          batcher.submit(CheckpointCommand.generated("a")),
          batcher.submit(CheckpointCommand.requested("b", 2)));
      heads.next().onComplete(test.succeeding(head -> head.result().complete(HEAD)));
      stores.next().onComplete(test.succeeding(store ->
          store.result().fail(AckpointException.storageUnavailable(new RuntimeException("connection reset")))));
      Future.join(results).onComplete(done -> test.verify(() -> {
        for (Future<CheckpointCreated> r : results) {
          assertTrue(r.failed());
          assertEquals("ACK_STORAGE_UNAVAILABLE", ((AckpointException) r.cause()).code());
        }
        assertEquals(1, stores.count());
        assertEquals(0, markers.count());
        test.completeNow();
      }));
    });
  }

  @Test
  void aFailedMarkerFailsTheBatch(VertxTestContext test) {
    context.runOnContext(v -> {
      Future<CheckpointCreated> result = batcher(true).submit(CheckpointCommand.generated("a"));
      heads.next().onComplete(test.succeeding(head -> head.result().complete(HEAD)));
      stores.next().onComplete(test.succeeding(store -> store.result().complete(stored(store.argument(), 1, true))));
      markers.next().onComplete(test.succeeding(marker ->
          marker.result().fail(AckpointException.sourceUnavailable(new RuntimeException("gone")))));
      result.onComplete(test.failing(e -> test.verify(() -> {
        assertEquals("ACK_SOURCE_UNAVAILABLE", ((AckpointException) e).code());
        test.completeNow();
      })));
    });
  }

  @Test
  void withBatchingOffEveryRequestIsItsOwnBatch(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(false);
      for (int i = 0; i < 5; i++) {
        batcher.submit(CheckpointCommand.generated("same-user"));
      }
      test.verify(() -> assertEquals(5, heads.count()));
      test.completeNow();
    });
  }

  @Test
  void drainedWaitsForTheBatchInFlight(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(true);
      batcher.submit(CheckpointCommand.generated("a"));
      Future<Void> drained = batcher.drained();
      heads.next().onComplete(test.succeeding(head -> {
        test.verify(() -> assertFalse(drained.isComplete()));
        head.result().complete(HEAD);
      }));
      stores.next().onComplete(test.succeeding(store -> store.result().complete(stored(store.argument(), 1, false))));
      drained.onComplete(test.succeedingThenComplete());
    });
  }
}
