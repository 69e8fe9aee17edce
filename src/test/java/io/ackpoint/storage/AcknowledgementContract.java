package io.ackpoint.storage;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.CustomCheckpoint;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.Reached;
import io.ackpoint.core.StoredBatch;
import io.ackpoint.support.Await;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import static io.ackpoint.storage.StorageBackend.H1;
import static io.ackpoint.storage.StorageBackend.H2;
import static io.ackpoint.storage.StorageBackend.H3;
import static io.ackpoint.storage.StorageBackend.generated;
import static io.ackpoint.storage.StorageBackend.requested;
import static io.ackpoint.storage.StorageBackend.user;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The storage contract past storing a batch: acknowledgement, the latest acknowledged id,
 * retention, custom checkpoints and health. Default methods, so that {@link CheckpointStorageContract}
 * runs them on every backend with its own.
 */
interface AcknowledgementContract {

  StorageBackend backend();

  default CheckpointStorage storage() {
    return backend().storage();
  }

  default StoredBatch store(String head, CheckpointWrite... writes) {
    return Await.result(storage().store(head, List.of(writes)));
  }

  @Test
  default void markingProcessedAnswersOneReachedPerUserWithItsGreatestId() {
    String early = "00000000/00000001";
    backend().migrateHolding(List.of(new StorageBackend.Seed("dup", 9, early), new StorageBackend.Seed("dup", 4, early),
        new StorageBackend.Seed("solo", 2, early)));
    List<Reached> reached = new ArrayList<>(Await.result(storage().markProcessed(H1)));
    reached.sort(Comparator.comparing(r -> r.user().userId()));
    assertEquals(List.of(new Reached(user("dup"), 9), new Reached(user("solo"), 2)), reached);
    assertEquals(List.of(), Await.result(storage().markProcessed(H1)), "nothing is announced twice");
  }

  @Test
  default void markingProcessedStopsAtThePositionAndHeadsCompareAsText() {
    backend().migrate();
    store(H1, requested("early", 1));
    store(H3, requested("late", 1));
    assertEquals(List.of(new Reached(user("early"), 1)), Await.result(storage().markProcessed(H2)));
    assertEquals(H2, backend().row("early").processedAt());
    assertNull(backend().row("late").processedAt());
    assertEquals(List.of(new Reached(user("late"), 1)), Await.result(storage().markProcessed(H3)));
  }

  @Test
  default void theLatestAcknowledgedIdIsTheGreatestAcknowledgedOneEvenWhileALaterOneIsPending() {
    backend().migrate();
    assertNull(Await.result(storage().latestAcknowledged(user("u"))));
    store(H1, requested("u", 4));
    assertNull(Await.result(storage().latestAcknowledged(user("u"))), "pending is not acknowledged");
    Await.result(storage().markProcessed(H1));
    assertEquals(new Acknowledged(4, H1), Await.result(storage().latestAcknowledged(user("u"))));
    store(H2, requested("u", 8));
    assertEquals(new Acknowledged(4, null), Await.result(storage().latestAcknowledged(user("u"))),
        "the one row is pending again, at 8: 4 stays acknowledged, where it was passed is no longer held");
    Await.result(storage().markProcessed(H3));
    assertEquals(new Acknowledged(8, H3), Await.result(storage().latestAcknowledged(user("u"))));
    assertNull(Await.result(storage().latestAcknowledged(FullUserId.of("u", "other"))));
  }

  @Test
  default void compactionDeletesOnlyExpiredProcessedRequestsInBoundedBatches() {
    backend().migrate();
    store(H1, requested("expired1", 1), requested("expired2", 1), requested("expired3", 1), requested("fresh", 1),
        generated("generated"));
    Await.result(storage().markProcessed(H1));
    store(H2, requested("pending", 1));
    Instant old = Instant.now().minus(2, ChronoUnit.HOURS);
    for (String u : List.of("expired1", "expired2", "expired3", "pending")) {
      backend().setRequestedAt(u, old);
    }
    Instant cutoff = Instant.now().minus(1, ChronoUnit.HOURS);
    long deleted = 0;
    int steps = 0;
    Long from = CompactionStep.START;
    while (from != null) {
      CompactionStep step = Await.result(storage().deleteExpiredRequests(cutoff, 2, from));
      assertTrue(step.deleted() <= 2, "bounded by the limit: " + step);
      deleted += step.deleted();
      steps++;
      from = step.next();
    }
    assertEquals(3, deleted);
    assertTrue(steps >= 2, "three rows to delete, at most two per step");
    assertEquals(3L, Await.result(storage().count()), "fresh, generated and pending stay");
    assertEquals(1, backend().rows(user("pending")), "a pending row is never deleted, however old");
    assertEquals(1, backend().rows(user("generated")));
  }

  @Test
  default void customCheckpointsArePendingAtTheirPositionAndOnlyEverGrow() {
    backend().migrate();
    Await.result(storage().storeCustom(H1, List.of(new CustomCheckpoint(user("app"), 5, false),
        new CustomCheckpoint(user("app"), 7, true), new CustomCheckpoint(user("other"), 3, false))));
    StorageBackend.Row app = backend().row("app");
    assertEquals(new StorageBackend.Row(7, H1, null, app.requestedAt()), app);
    assertNotNull(app.requestedAt(), "the greatest of the transaction wins, with its request flag");
    assertNull(backend().row("other").requestedAt(), "a persistent custom checkpoint is never compacted");
    Await.result(storage().storeCustom(H2, List.of(new CustomCheckpoint(user("app"), 6, false))));
    assertEquals(7L, backend().row("app").checkpoint());
    assertEquals(H1, backend().row("app").head(), "a lower id changes nothing");
    assertEquals(List.of(new Reached(user("app"), 7), new Reached(user("other"), 3)),
        sorted(Await.result(storage().markProcessed(H1))));
    Await.result(storage().storeCustom(H2, List.of(new CustomCheckpoint(user("app"), 8, false))));
    assertEquals(new StorageBackend.Row(8, H2, null, null), backend().row("app"));
  }

  /**
   * A stream that opens while a raised custom checkpoint is pending starts at the id acknowledged
   * before it: not below an id streams may have been told already.
   */
  @Test
  default void aCustomCheckpointThatRaisesAnAcknowledgedRowKeepsThatIdAsTheLatestAcknowledged() {
    backend().migrate();
    Await.result(storage().storeCustom(H1, List.of(new CustomCheckpoint(user("app"), 5, false))));
    Await.result(storage().markProcessed(H1));
    Await.result(storage().storeCustom(H2, List.of(new CustomCheckpoint(user("app"), 9, false))));
    assertEquals(new Acknowledged(5, null), Await.result(storage().latestAcknowledged(user("app"))), "pending at 9: 5 stays acknowledged");
    Await.result(storage().storeCustom(H3, List.of(new CustomCheckpoint(user("app"), 12, true))));
    assertEquals(new Acknowledged(5, null), Await.result(storage().latestAcknowledged(user("app"))), "raised again while pending: still 5");
    Await.result(storage().markProcessed(H3));
    assertEquals(new Acknowledged(12, H3), Await.result(storage().latestAcknowledged(user("app"))));
  }

  @Test
  default void aCustomRequestRepeatedWithTheSameIdOnlyRefreshesRequestedAt() {
    backend().migrate();
    Await.result(storage().storeCustom(H1, List.of(new CustomCheckpoint(user("app"), 7, true))));
    Await.result(storage().markProcessed(H1));
    Instant aged = Instant.now().minus(1, ChronoUnit.DAYS);
    backend().setRequestedAt("app", aged);
    Await.result(storage().storeCustom(H2, List.of(new CustomCheckpoint(user("app"), 7, true))));
    StorageBackend.Row app = backend().row("app");
    assertEquals(7L, app.checkpoint());
    assertEquals(H1, app.head(), "an equal id is not pending again");
    assertEquals(H1, app.processedAt());
    assertTrue(app.requestedAt().isAfter(aged), "a request repeated is not compacted away");
  }

  /** The application's latest row for an id says whether it is a request: one repeated without the flag is kept from compaction. */
  @Test
  default void aCustomCheckpointRepeatedWithoutTheRequestFlagIsNoLongerCompactable() {
    backend().migrate();
    Await.result(storage().storeCustom(H1, List.of(new CustomCheckpoint(user("app"), 7, true))));
    Await.result(storage().storeCustom(H2, List.of(new CustomCheckpoint(user("app"), 7, false))));
    assertNull(backend().row("app").requestedAt(), "across transactions");
    Await.result(storage().storeCustom(H2, List.of(new CustomCheckpoint(user("one"), 4, true),
        new CustomCheckpoint(user("one"), 4, false))));
    assertNull(backend().row("one").requestedAt(), "within one transaction, the later row");
  }

  @Test
  default void storageAnswersAPingAndCountsItsRows() {
    backend().migrate();
    Await.result(storage().ping());
    assertEquals(0L, Await.result(storage().count()));
    store(H1, generated("a"), generated("b"));
    assertEquals(2L, Await.result(storage().count()));
  }

  private static List<Reached> sorted(List<Reached> reached) {
    List<Reached> copy = new ArrayList<>(reached);
    copy.sort(Comparator.comparing(r -> r.user().userId()));
    return copy;
  }

  @Test
  default void historyReadsBackWhatWasProcessedBetweenTwoPositionsByPosition() {
    backend().migrate();
    store(H1, requested("early", 1));
    store(H3, requested("late", 2));
    store(H3, requested("pending", 1));
    backend().markProcessed("early", H1);
    backend().markProcessed("late", H3);
    AcknowledgementHistory history = backend().history();
    assertEquals(java.util.Map.of(H1, List.of(new Reached(user("early"), 1)), H3, List.of(new Reached(user("late"), 2))),
        Await.result(history.processedFrom("", null)));
    assertEquals(java.util.Map.of(H3, List.of(new Reached(user("late"), 2))), Await.result(history.processedFrom(H2, null)));
    assertEquals(java.util.Map.of(H1, List.of(new Reached(user("early"), 1)), H3, List.of(new Reached(user("late"), 2))),
        Await.result(history.processedFrom(H1, null)), "from is inclusive");
    assertEquals(java.util.Map.of(H1, List.of(new Reached(user("early"), 1))), Await.result(history.processedFrom("", H2)));
    assertEquals(java.util.Map.of(H3, List.of(new Reached(user("late"), 2))), Await.result(history.processedFrom(H2, H3)),
        "upTo is inclusive");
  }

  @Test
  default void historyAnswersTheLatestPositionAnythingWasProcessedAt() {
    backend().migrate();
    AcknowledgementHistory history = backend().history();
    assertEquals("", Await.result(history.latestProcessed()), "nothing processed yet");
    store(H1, requested("early", 1));
    store(H3, requested("late", 2));
    store(H2, requested("pending", 1));
    backend().markProcessed("late", H3);
    backend().markProcessed("early", H1);
    assertEquals(H3, Await.result(history.latestProcessed()));
  }
}
