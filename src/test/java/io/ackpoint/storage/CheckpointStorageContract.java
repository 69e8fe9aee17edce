package io.ackpoint.storage;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.CustomCheckpoint;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.Reached;
import io.ackpoint.core.StoredBatch;
import io.ackpoint.core.WriteOutcome;
import io.ackpoint.support.Await;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

import static io.ackpoint.storage.StorageBackend.H1;
import static io.ackpoint.storage.StorageBackend.H2;
import static io.ackpoint.storage.StorageBackend.H3;
import static io.ackpoint.storage.StorageBackend.checkpoint;
import static io.ackpoint.storage.StorageBackend.generated;
import static io.ackpoint.storage.StorageBackend.generatedId;
import static io.ackpoint.storage.StorageBackend.requested;
import static io.ackpoint.storage.StorageBackend.user;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SPEC section 6, the storage contract: the same behaviour tests for every backend, each subclass
 * running them on a real server of its kind, so that the backends cannot drift apart. Heads are
 * opaque strings to storage, compared as such; backend-specific matters (schema, indexes,
 * migrations of older installs) are tested in the subclasses. This class holds what storing a batch
 * does, {@link AcknowledgementContract} what comes after.
 */
@ExtendWith(VertxExtension.class)
abstract class CheckpointStorageContract implements AcknowledgementContract {

  /** The backend under test, on a fresh database. */
  abstract StorageBackend open(Vertx vertx);

  StorageBackend backend;

  @Override
  public StorageBackend backend() {
    return backend;
  }

  @BeforeEach
  void openBackend(Vertx vertx) {
    backend = open(vertx);
  }

  @AfterEach
  void closeBackend() {
    backend.close();
  }

  private void ageRequestedAt(String userId) {
    backend.setRequestedAt(userId, Instant.now().minus(1, ChronoUnit.DAYS));
  }

  @Test
  void generatedIdsStartAtOneAndIncrement() {
    backend.migrate();
    assertEquals(1L, checkpoint(store(H1, generated("u")), "u"));
    assertEquals(2L, checkpoint(store(H2, generated("u")), "u"));
    assertEquals(H2, backend.row("u").head());
  }

  @Test
  void aGreaterSuppliedIdReplacesTheHeadAndIsPendingAgain() {
    backend.migrate();
    store(H1, requested("u", 5));
    backend.markProcessed("u", H1);
    StoredBatch batch = store(H2, requested("u", 7));
    assertEquals(7L, checkpoint(batch, "u"));
    assertTrue(batch.shouldAdvance());
    assertEquals(H2, backend.row("u").head());
    assertNull(backend.row("u").processedAt());
  }

  /**
   * Batches that overlap (cluster nodes, batches in flight together, a timed-out batch whose
   * statement still runs) can commit out of the order they read their heads in. Acknowledging the
   * later id at the earlier head would acknowledge the pending lower id with it, before the
   * position its client's write needs.
   */
  @Test
  void aRaisedRowNeverTakesAHeadEarlierThanTheOneItHeld() {
    backend.migrate();
    store(H2, generated("u"));
    StoredBatch late = store(H1, generated("u"));
    assertEquals(2L, checkpoint(late, "u"));
    assertEquals(H2, backend.row("u").head());
    assertEquals(List.of(), Await.result(storage().markProcessed(H1)), "nothing is acknowledged before H2");
    store(H3, requested("u", 7));
    assertEquals(H3, backend.row("u").head(), "a later head still replaces it");
  }

  /**
   * Once a row is processed its id is acknowledged and its head protects nothing: a later id needs
   * only its own batch's head, even an earlier one (a source restored to an earlier point, or
   * replaced, starts over below it).
   */
  @Test
  void aProcessedRowRaisedTakesTheBatchsHeadEvenAnEarlierOne() {
    backend.migrate();
    store(H3, generated("u"));
    backend.markProcessed("u", H3);
    store(H1, generated("u"));
    assertEquals(H1, backend.row("u").head());
    assertEquals(List.of(new Reached(user("u"), 2)), Await.result(storage().markProcessed(H2)));
  }

  @Test
  void anEqualIdOnlyRefreshesRequestedAt() {
    backend.migrate();
    store(H1, requested("u", 5));
    backend.markProcessed("u", H1);
    ageRequestedAt("u");
    Instant aged = backend.row("u").requestedAt();
    StoredBatch batch = store(H2, requested("u", 5));
    assertEquals(5L, checkpoint(batch, "u"));
    assertFalse(batch.shouldAdvance(), "already processed: no marker needed");
    StorageBackend.Row after = backend.row("u");
    assertEquals(H1, after.head());
    assertEquals(H1, after.processedAt());
    assertTrue(after.requestedAt().isAfter(aged));
  }

  @Test
  void aLowerIdChangesNothingAndAnswersTheStoredId() {
    backend.migrate();
    store(H1, requested("u", 5));
    backend.markProcessed("u", H1);
    ageRequestedAt("u");
    Instant aged = backend.row("u").requestedAt();
    StoredBatch batch = store(H2, requested("u", 3));
    assertEquals(5L, checkpoint(batch, "u"));
    assertFalse(batch.shouldAdvance());
    assertEquals(H1, backend.row("u").head());
    assertEquals(aged, backend.row("u").requestedAt());
  }

  @Test
  void aRetryThatMatchesAPendingRowAsksForAMarkerAgain() {
    backend.migrate();
    store(H1, requested("u", 5));
    assertTrue(store(H2, requested("u", 5)).shouldAdvance(), "equal retry of a pending row");
    assertTrue(store(H2, requested("u", 4)).shouldAdvance(), "stale retry of a pending row");
    backend.markProcessed("u", H2);
    assertFalse(store(H2, requested("u", 5)).shouldAdvance());
    assertFalse(store(H2, requested("u", 4)).shouldAdvance());
  }

  @Test
  void aBatchAsksForAMarkerWhenAnyOfItsCheckpointsIsPending() {
    backend.migrate();
    store(H1, requested("done", 5));
    backend.markProcessed("done", H1);
    assertTrue(store(H2, requested("done", 5), requested("new", 1)).shouldAdvance());
  }

  @Test
  void aGeneratedIdOnAProcessedRequestRowMakesItAGeneratedPendingRow() {
    backend.migrate();
    store(H1, requested("u", 5));
    backend.markProcessed("u", H1);
    StoredBatch batch = store(H2, generated("u"));
    assertEquals(6L, checkpoint(batch, "u"));
    assertTrue(batch.shouldAdvance());
    assertNull(backend.row("u").requestedAt(), "generated rows carry no request time");
  }

  @Test
  void olderInstallsWithDuplicateRowsKeepWorkingAndAnswerTheMaximum() {
    String early = "00000000/00000001";
    backend.migrateHolding(List.of(new StorageBackend.Seed("dup", 3, early), new StorageBackend.Seed("dup", 6, early)));
    assertEquals(6L, checkpoint(store(H1, requested("dup", 5)), "dup"));
    assertEquals(List.of(5L, 6L), backend.ids("dup"), "the lower duplicate was raised to the supplied id");
    assertEquals(7L, checkpoint(store(H1, generated("dup")), "dup"));
    assertEquals(9L, checkpoint(store(H2, requested("dup", 9)), "dup"));
    assertEquals(List.of(9L, 9L), backend.ids("dup"));
  }

  @Test
  void concurrentBatchesThatShareUsersNeitherDeadlockNorLoseIncrements() {
    backend.migrate();
    List<String> users = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      users.add("user-" + i);
    }
    Random random = new Random(42);
    List<Future<StoredBatch>> batches = new ArrayList<>();
    for (int round = 0; round < 6; round++) {
      // Each batch lists the same users in its own order, and the first ones create the rows.
      List<CheckpointWrite> writes = new ArrayList<>();
      List<String> shuffled = new ArrayList<>(users);
      Collections.shuffle(shuffled, random);
      shuffled.forEach(u -> writes.add(generated(u)));
      batches.add(storage().store(H1, writes));
    }
    Await.result(Future.all(batches));
    for (String u : users) {
      assertEquals(List.of(6L), backend.ids(u), u);
    }
    List<Long> answered = new ArrayList<>();
    batches.forEach(b -> answered.add(generatedId(b.result(), "user-7")));
    Collections.sort(answered);
    assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L), answered, "every batch answered its own increment");
  }

  @Test
  void aLargeBatchIsStoredAndAnsweredForEveryUser() {
    backend.migrate();
    List<CheckpointWrite> writes = new ArrayList<>();
    for (int i = 0; i < 5000; i++) {
      writes.add(i % 2 == 0 ? generated("g" + i) : requested("r" + i, i));
    }
    StoredBatch batch = Await.result(storage().store(H1, writes));
    assertEquals(5000, batch.outcomes().size());
    assertEquals(1L, checkpoint(batch, "g0"));
    assertEquals(4999L, checkpoint(batch, "r4999"));
    assertNotNull(backend.row("r1").requestedAt());
    assertEquals(5000, backend.rows());
  }

  // The collapse rule, for every pair of request kinds of one user in one batch ("generated, then supplied").

  @Test
  void generatedWithAStaleSuppliedIdGetsANewIdAndTheRowStaysGenerated() {
    backend.migrate();
    store(H1, requested("u", 5));
    backend.markProcessed("u", H1);
    StoredBatch batch = store(H2, new CheckpointWrite(user("u"), true, 3L));
    assertEquals(6L, generatedId(batch, "u"), "a new id, never the already acknowledged 5");
    assertEquals(6L, checkpoint(batch, "u"));
    assertTrue(batch.shouldAdvance());
    StorageBackend.Row row = backend.row("u");
    assertEquals(6L, row.checkpoint());
    assertEquals(H2, row.head(), "stored with this batch's head");
    assertNull(row.processedAt());
    assertNull(row.requestedAt(), "the generated id holds the row: no request time");
  }

  @Test
  void generatedWithASuppliedIdEqualToTheNewIdShareItAndTheRowIsARequest() {
    backend.migrate();
    store(H1, requested("u", 5));
    backend.markProcessed("u", H1);
    StoredBatch batch = store(H2, new CheckpointWrite(user("u"), true, 6L));
    assertEquals(6L, generatedId(batch, "u"));
    assertEquals(6L, checkpoint(batch, "u"));
    assertEquals(H2, backend.row("u").head());
    assertNotNull(backend.row("u").requestedAt());
  }

  @Test
  void generatedWithAGreaterSuppliedIdGetsTheNextIdAndTheRowTakesTheSuppliedOne() {
    backend.migrate();
    store(H1, requested("u", 5));
    backend.markProcessed("u", H1);
    StoredBatch batch = store(H2, new CheckpointWrite(user("u"), true, 9L));
    assertEquals(6L, generatedId(batch, "u"), "what a supplied id does never changes the generated answer");
    assertEquals(9L, checkpoint(batch, "u"));
    assertEquals(9L, backend.row("u").checkpoint());
    assertEquals(H2, backend.row("u").head(), "both answers are at or below the row's id, stored with this head");
    assertNotNull(backend.row("u").requestedAt());
  }

  @Test
  void generatedAndSuppliedForANewUserCreateOneRow() {
    backend.migrate();
    StoredBatch batch = store(H1, new CheckpointWrite(user("new"), true, 4L), new CheckpointWrite(user("new2"), true, 1L));
    assertEquals(1L, generatedId(batch, "new"));
    assertEquals(4L, checkpoint(batch, "new"));
    assertEquals(1L, generatedId(batch, "new2"));
    assertEquals(1L, checkpoint(batch, "new2"));
    assertEquals(2, backend.rows());
  }

  @Test
  void anExhaustedUserChangesNothingAndTheRestOfItsBatchIsStored() {
    backend.migrate();
    store(H1, requested("max", Long.MAX_VALUE));
    backend.markProcessed("max", H1);
    StoredBatch batch = store(H2, generated("max"), generated("other"), requested("third", 3));
    assertEquals(new WriteOutcome.Exhausted(Long.MAX_VALUE, false), batch.outcomes().get(user("max")));
    assertEquals(1L, generatedId(batch, "other"));
    assertEquals(3L, checkpoint(batch, "third"));
    assertEquals(H1, backend.row("max").head(), "the exhausted row keeps its head");
    assertEquals(H1, backend.row("max").processedAt(), "and stays processed");
  }

  @Test
  void anExhaustedUsersSuppliedIdIsAnsweredAndAnEqualOneRefreshesItsRequestTime() {
    backend.migrate();
    store(H1, requested("max", Long.MAX_VALUE));
    ageRequestedAt("max");
    Instant aged = backend.row("max").requestedAt();
    StoredBatch batch = store(H2, new CheckpointWrite(user("max"), true, Long.MAX_VALUE));
    assertEquals(new WriteOutcome.Exhausted(Long.MAX_VALUE, true), batch.outcomes().get(user("max")));
    assertTrue(backend.row("max").requestedAt().isAfter(aged));
  }

  @Test
  void aClientIdIsItsOwnKeyAndNeverJoinedToTheSub() {
    backend.migrate();
    StoredBatch batch = store(H1, CheckpointWrite.generated(FullUserId.of("a", "b")), generated("a/b"),
        CheckpointWrite.generated(FullUserId.of("a", "c")));
    assertEquals(3, backend.rows());
    assertEquals(1L, ((WriteOutcome.Stored) batch.outcomes().get(FullUserId.of("a", "b"))).generated());
    assertEquals(1L, generatedId(batch, "a/b"));
    assertEquals(1, backend.rows(FullUserId.of("a", "b")));
    assertEquals(1, backend.rows(FullUserId.of("a/b", null)));
    assertEquals(2L, checkpoint(store(H2, generated("a/b")), "a/b"));
    assertEquals(1L, ((WriteOutcome.Stored) store(H2, CheckpointWrite.requested(FullUserId.of("a", "b"), 1))
        .outcomes().get(FullUserId.of("a", "b"))).checkpoint(), "sub a/b moved on, client b of sub a did not");
  }
}
