package io.ackpoint.core;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * A transaction's custom checkpoints reach storage in chunks of bounded size (both backends store
 * them through {@link CustomCheckpoints#storeInChunks}): one write for all of a bulk transaction's
 * could outlast its timeout and be sent again by the slot for ever.
 */
@ExtendWith(VertxExtension.class)
class CustomCheckpointsTest {

  @Test
  void aTransactionIsStoredInChunksOfBoundedSizeOneAfterTheOtherTheLatestPerUser(Vertx vertx, VertxTestContext test) {
    List<CustomCheckpoint> transaction = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      transaction.add(new CustomCheckpoint(FullUserId.of("u" + i, "c"), i + 1, false));
    }
    transaction.add(new CustomCheckpoint(FullUserId.of("u0", "c"), 40, true));
    List<List<CustomCheckpoint>> chunks = new ArrayList<>();
    boolean[] storing = {false};
    CustomCheckpoints.storeInChunks(transaction, 3, chunk -> {
      assertFalse(storing[0], "a chunk starts once the one before it is stored");
      storing[0] = true;
      chunks.add(List.copyOf(chunk));
      Promise<Void> stored = Promise.promise();
      vertx.runOnContext(v -> {
        storing[0] = false;
        stored.complete();
      });
      return stored.future();
    }).onComplete(test.succeeding(v -> test.verify(() -> {
      assertEquals(List.of(3, 3, 1), chunks.stream().map(List::size).toList());
      assertEquals(new CustomCheckpoint(FullUserId.of("u0", "c"), 40, true), chunks.get(0).get(0), "the greatest id of a user");
      test.completeNow();
    })));
  }

  @Test
  void aChunkThatFailsFailsTheTransactionAndNoLaterChunkIsStored(VertxTestContext test) {
    List<CustomCheckpoint> transaction = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      transaction.add(new CustomCheckpoint(FullUserId.of("u" + i, "c"), i + 1, false));
    }
    List<Integer> tried = new ArrayList<>();
    CustomCheckpoints.storeInChunks(transaction, 3, chunk -> {
      tried.add(chunk.size());
      return tried.size() == 2 ? Future.failedFuture("storage is unavailable") : Future.succeededFuture();
    }).onComplete(test.failing(e -> test.verify(() -> {
      assertEquals("storage is unavailable", e.getMessage());
      assertEquals(List.of(3, 3), tried);
      test.completeNow();
    })));
  }
}
