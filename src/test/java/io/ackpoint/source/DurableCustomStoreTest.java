package io.ackpoint.source;

import io.ackpoint.core.CustomCheckpoint;
import io.ackpoint.core.CustomCheckpoints;
import io.ackpoint.core.FullUserId;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The follower waits for storage to make a transaction's custom checkpoints durable: for
 * {@code custom.store_timeout} per statement's worth of them (storage writes a bulk transaction in
 * many statements), keeping the replication connection alive while it waits.
 */
@ExtendWith(VertxExtension.class)
class DurableCustomStoreTest {

  private static final String POSITION = "00000000/00000001";
  private static final Duration STORE_TIMEOUT = Duration.ofSeconds(2);

  private DurableCustomStore store;

  /** Storage that takes 2.5 s, more than one store timeout. */
  @BeforeEach
  void slowStorage(Vertx vertx) {
    vertx.eventBus().consumer("store", msg -> vertx.setTimer(2_500, id -> msg.reply(null)));
    store = new DurableCustomStore(vertx.eventBus(), "store", STORE_TIMEOUT, Duration.ofMillis(100));
  }

  @Test
  void aBulkTransactionHasTheStoreTimeoutForEachStatementsWorthAndKeepsTheStreamAliveMeanwhile() throws FollowerFailure {
    AtomicInteger keptAlive = new AtomicInteger();
    store.store(POSITION, checkpoints(3 * CustomCheckpoints.PER_STATEMENT), keptAlive::incrementAndGet);
    assertTrue(keptAlive.get() >= 5, "the replication connection was kept alive " + keptAlive + " times in 2.5 s");
  }

  @Test
  void aSmallTransactionHasTheStoreTimeoutOnce() {
    assertThrows(FollowerFailure.class, () -> store.store(POSITION, checkpoints(1), () -> { }));
  }

  private static List<CustomCheckpoint> checkpoints(int users) {
    List<CustomCheckpoint> checkpoints = new ArrayList<>(users);
    for (int i = 0; i < users; i++) {
      checkpoints.add(new CustomCheckpoint(FullUserId.of("u" + i, "c"), 1, false));
    }
    return checkpoints;
  }
}
