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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SPEC section 6, the storage contract: the same behaviour tests for every backend, each subclass
 * running them on a real server of its kind, so that the backends cannot drift apart. Heads are
 * opaque strings to storage, compared as such; backend-specific matters (schema, indexes,
 * migrations of older installs) are tested in the subclasses.
 */
@ExtendWith(VertxExtension.class)
abstract class CheckpointStorageContract {

  static final String H1 = "00000000/01000000";
  static final String H2 = "00000000/02000000";
  static final String H3 = "00000000/03000000";

  /** A document or row as the contract looks at it. */
  record Row(long checkpoint, String head, String processedAt, Instant requestedAt) {
  }

  /** A row of an older install, written directly (no unique index stops its duplicates). */
  record Seed(String userId, long checkpoint, String head) {
  }

  /** What the contract needs of a backend besides the storage itself: a look at its rows. */
  interface Backend extends AutoCloseable {

    CheckpointStorage storage();

    /** A fresh install: every migration. */
    void migrate();

    /** An older install that already holds {@code seeds}, duplicates included, then migrated. */
    void migrateHolding(List<Seed> seeds);

    /** The row of {@code userId} without a client id (the test made exactly one). */
    Row row(String userId);

    /** The ids of the rows of {@code userId} without a client id, ascending. */
    List<Long> ids(String userId);

    long rows(FullUserId user);

    long rows();

    /** As if replication had passed the row of {@code userId} at {@code position}. */
    void markProcessed(String userId, String position);

    void setRequestedAt(String userId, Instant at);

    @Override
    void close();
  }

  /** The backend under test, on a fresh database. */
  abstract Backend open(Vertx vertx);

  Backend backend;
  CheckpointStorage storage;

  @BeforeEach
  void openBackend(Vertx vertx) {
    backend = open(vertx);
    storage = backend.storage();
  }

  @AfterEach
  void closeBackend() {
    backend.close();
  }

  StoredBatch store(String head, CheckpointWrite... writes) {
    return Await.result(storage.store(head, List.of(writes)));
  }

  static FullUserId user(String userId) {
    return FullUserId.of(userId, null);
  }

  static CheckpointWrite generated(String userId) {
    return CheckpointWrite.generated(user(userId));
  }

  static CheckpointWrite requested(String userId, long id) {
    return CheckpointWrite.requested(user(userId), id);
  }

  /** The id storage holds for {@code userId} after the batch (what supplied requests are answered). */
  static long checkpoint(StoredBatch batch, String userId) {
    return ((WriteOutcome.Stored) batch.outcomes().get(user(userId))).checkpoint();
  }

  /** The id generated requests of {@code userId} are answered. */
  static long generatedId(StoredBatch batch, String userId) {
    return ((WriteOutcome.Stored) batch.outcomes().get(user(userId))).generated();
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
    Row after = backend.row("u");
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
    backend.migrateHolding(List.of(new Seed("dup", 3, "00000000/00000001"), new Seed("dup", 6, "00000000/00000001")));
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
      batches.add(storage.store(H1, writes));
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
    StoredBatch batch = Await.result(storage.store(H1, writes));
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
    Row row = backend.row("u");
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

  @Test
  void markingProcessedAnswersOneReachedPerUserWithItsGreatestId() {
    backend.migrateHolding(List.of(new Seed("dup", 9, "00000000/00000001"), new Seed("dup", 4, "00000000/00000001"),
        new Seed("solo", 2, "00000000/00000001")));
    List<Reached> reached = new ArrayList<>(Await.result(storage.markProcessed(H1)));
    reached.sort(Comparator.comparing(r -> r.user().userId()));
    assertEquals(List.of(new Reached(user("dup"), 9), new Reached(user("solo"), 2)), reached);
    assertEquals(List.of(), Await.result(storage.markProcessed(H1)), "nothing is announced twice");
  }

  @Test
  void markingProcessedStopsAtThePositionAndHeadsCompareAsText() {
    backend.migrate();
    store(H1, requested("early", 1));
    store(H3, requested("late", 1));
    assertEquals(List.of(new Reached(user("early"), 1)), Await.result(storage.markProcessed(H2)));
    assertEquals(H2, backend.row("early").processedAt());
    assertNull(backend.row("late").processedAt());
    assertEquals(List.of(new Reached(user("late"), 1)), Await.result(storage.markProcessed(H3)));
  }

  @Test
  void theLatestAcknowledgedIdIsTheGreatestProcessedOne() {
    backend.migrate();
    assertNull(Await.result(storage.latestAcknowledged(user("u"))));
    store(H1, requested("u", 4));
    assertNull(Await.result(storage.latestAcknowledged(user("u"))), "pending is not acknowledged");
    Await.result(storage.markProcessed(H1));
    assertEquals(4L, Await.result(storage.latestAcknowledged(user("u"))));
    store(H2, requested("u", 8));
    assertNull(Await.result(storage.latestAcknowledged(user("u"))), "the one row is pending again, at 8");
    Await.result(storage.markProcessed(H2));
    assertEquals(8L, Await.result(storage.latestAcknowledged(user("u"))));
    assertNull(Await.result(storage.latestAcknowledged(FullUserId.of("u", "other"))));
  }

  @Test
  void compactionDeletesOnlyExpiredProcessedRequestsInBoundedBatches() {
    backend.migrate();
    store(H1, requested("expired1", 1), requested("expired2", 1), requested("expired3", 1), requested("fresh", 1),
        generated("generated"));
    Await.result(storage.markProcessed(H1));
    store(H2, requested("pending", 1));
    Instant old = Instant.now().minus(2, ChronoUnit.HOURS);
    for (String u : List.of("expired1", "expired2", "expired3", "pending")) {
      backend.setRequestedAt(u, old);
    }
    Instant cutoff = Instant.now().minus(1, ChronoUnit.HOURS);
    assertEquals(2, Await.result(storage.deleteExpiredRequests(cutoff, 2)), "bounded by the limit");
    assertEquals(1, Await.result(storage.deleteExpiredRequests(cutoff, 2)));
    assertEquals(0, Await.result(storage.deleteExpiredRequests(cutoff, 2)));
    assertEquals(3L, Await.result(storage.count()), "fresh, generated and pending stay");
    assertEquals(1, backend.rows(user("pending")), "a pending row is never deleted, however old");
    assertEquals(1, backend.rows(user("generated")));
  }

  @Test
  void customCheckpointsArePendingAtTheirPositionAndOnlyEverGrow() {
    backend.migrate();
    Await.result(storage.storeCustom(H1, List.of(new CustomCheckpoint(user("app"), 5, false),
        new CustomCheckpoint(user("app"), 7, true), new CustomCheckpoint(user("other"), 3, false))));
    Row app = backend.row("app");
    assertEquals(new Row(7, H1, null, app.requestedAt()), app);
    assertNotNull(app.requestedAt(), "the greatest of the transaction wins, with its request flag");
    assertNull(backend.row("other").requestedAt(), "a persistent custom checkpoint is never compacted");
    Await.result(storage.storeCustom(H2, List.of(new CustomCheckpoint(user("app"), 6, false))));
    assertEquals(7L, backend.row("app").checkpoint());
    assertEquals(H1, backend.row("app").head(), "a lower id changes nothing");
    assertEquals(List.of(new Reached(user("app"), 7), new Reached(user("other"), 3)),
        sorted(Await.result(storage.markProcessed(H1))));
    Await.result(storage.storeCustom(H2, List.of(new CustomCheckpoint(user("app"), 8, false))));
    assertEquals(new Row(8, H2, null, null), backend.row("app"));
  }

  @Test
  void storageAnswersAPingAndCountsItsRows() {
    backend.migrate();
    Await.result(storage.ping());
    assertEquals(0L, Await.result(storage.count()));
    store(H1, generated("a"), generated("b"));
    assertEquals(2L, Await.result(storage.count()));
  }

  private static List<Reached> sorted(List<Reached> reached) {
    List<Reached> copy = new ArrayList<>(reached);
    copy.sort(Comparator.comparing(r -> r.user().userId()));
    return copy;
  }
}
