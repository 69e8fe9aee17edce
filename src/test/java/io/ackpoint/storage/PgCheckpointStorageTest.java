package io.ackpoint.storage;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.Reached;
import io.ackpoint.core.StoredBatch;
import io.ackpoint.core.WriteOutcome;
import io.ackpoint.core.FullUserId;
import io.ackpoint.support.Await;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestDatabase;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SPEC section 6 on a real PostgreSQL. */
@ExtendWith(VertxExtension.class)
class PgCheckpointStorageTest {

  private static final String H1 = "00000000/01000000";
  private static final String H2 = "00000000/02000000";

  private Sql sql;
  private PgCheckpointStorage storage;

  @BeforeEach
  void setUp(Vertx vertx) {
    sql = new Sql(vertx, TestDatabase.freshDatabase());
    storage = new PgCheckpointStorage(sql.pool());
  }

  @AfterEach
  void tearDown() {
    sql.close();
  }

  private void migrate() {
    Await.result(PgMigrations.migrate(sql.pool()));
  }

  private StoredBatch store(String head, CheckpointWrite... writes) {
    return Await.result(storage.store(head, List.of(writes)));
  }

  private static FullUserId user(String userId) {
    return FullUserId.of(userId, null);
  }

  private static CheckpointWrite generated(String userId) {
    return CheckpointWrite.generated(user(userId));
  }

  private static CheckpointWrite requested(String userId, long id) {
    return CheckpointWrite.requested(user(userId), id);
  }

  /** The id storage holds for {@code userId} after the batch (what supplied requests are answered). */
  private static long checkpoint(StoredBatch batch, String userId) {
    return ((WriteOutcome.Stored) batch.outcomes().get(user(userId))).checkpoint();
  }

  /** The id generated requests of {@code userId} are answered. */
  private static long generatedId(StoredBatch batch, String userId) {
    return ((WriteOutcome.Stored) batch.outcomes().get(user(userId))).generated();
  }

  private Row row(String user) {
    return sql.query("SELECT write_checkpoint, lsns->>'1', processed_at_lsn, checkpoint_requested_at"
        + " FROM ackpoint_write_checkpoints WHERE user_id = $1", user).iterator().next();
  }

  private void markProcessed(String user, String at) {
    sql.query("UPDATE ackpoint_write_checkpoints SET processed_at_lsn = $2 WHERE user_id = $1", user, at);
  }

  private void ageRequestedAt(String user) {
    sql.query("UPDATE ackpoint_write_checkpoints SET checkpoint_requested_at = now() - interval '1 day' WHERE user_id = $1", user);
  }

  @Test
  void freshInstallHasAUniqueIndexOnTheFullUserId() {
    migrate();
    assertEquals(1, sql.count("SELECT count(*) FROM pg_indexes WHERE indexname = 'ackpoint_write_checkpoints_user_client_key'"));
    assertEquals(0, sql.count("SELECT count(*) FROM pg_indexes WHERE indexname IN ("
        + "'ackpoint_write_checkpoints_user_id_key', 'ackpoint_write_checkpoints_user_id_idx', 'ackpoint_write_checkpoints_user_client_idx')"));
    assertEquals(0, (int) Await.result(PgMigrations.migrate(sql.pool())), "migrations run once");
  }

  @Test
  void generatedIdsStartAtOneAndIncrement() {
    migrate();
    assertEquals(1L, checkpoint(store(H1, generated("u")), "u"));
    assertEquals(2L, checkpoint(store(H2, generated("u")), "u"));
    assertEquals(H2, row("u").getString(1));
  }

  @Test
  void aGreaterSuppliedIdReplacesTheHeadAndIsPendingAgain() {
    migrate();
    store(H1, requested("u", 5));
    markProcessed("u", H1);
    StoredBatch batch = store(H2, requested("u", 7));
    assertEquals(7L, checkpoint(batch, "u"));
    assertTrue(batch.shouldAdvance());
    assertEquals(H2, row("u").getString(1));
    assertNull(row("u").getValue(2));
  }

  @Test
  void anEqualIdOnlyRefreshesRequestedAt() {
    migrate();
    store(H1, requested("u", 5));
    markProcessed("u", H1);
    ageRequestedAt("u");
    OffsetDateTime aged = row("u").getOffsetDateTime(3);
    StoredBatch batch = store(H2, requested("u", 5));
    assertEquals(5L, checkpoint(batch, "u"));
    assertFalse(batch.shouldAdvance(), "already processed: no marker needed");
    Row after = row("u");
    assertEquals(H1, after.getString(1));
    assertEquals(H1, after.getString(2));
    assertTrue(after.getOffsetDateTime(3).isAfter(aged));
  }

  @Test
  void aLowerIdChangesNothingAndAnswersTheStoredId() {
    migrate();
    store(H1, requested("u", 5));
    markProcessed("u", H1);
    ageRequestedAt("u");
    OffsetDateTime aged = row("u").getOffsetDateTime(3);
    StoredBatch batch = store(H2, requested("u", 3));
    assertEquals(5L, checkpoint(batch, "u"));
    assertFalse(batch.shouldAdvance());
    assertEquals(H1, row("u").getString(1));
    assertEquals(aged, row("u").getOffsetDateTime(3));
  }

  @Test
  void aRetryThatMatchesAPendingRowAsksForAMarkerAgain() {
    migrate();
    store(H1, requested("u", 5));
    assertTrue(store(H2, requested("u", 5)).shouldAdvance(), "equal retry of a pending row");
    assertTrue(store(H2, requested("u", 4)).shouldAdvance(), "stale retry of a pending row");
    markProcessed("u", H2);
    assertFalse(store(H2, requested("u", 5)).shouldAdvance());
    assertFalse(store(H2, requested("u", 4)).shouldAdvance());
  }

  @Test
  void aBatchAsksForAMarkerWhenAnyOfItsCheckpointsIsPending() {
    migrate();
    store(H1, requested("done", 5));
    markProcessed("done", H1);
    assertTrue(store(H2, requested("done", 5), requested("new", 1)).shouldAdvance());
  }

  @Test
  void aGeneratedIdOnAProcessedRequestRowMakesItAGeneratedPendingRow() {
    migrate();
    store(H1, requested("u", 5));
    markProcessed("u", H1);
    StoredBatch batch = store(H2, generated("u"));
    assertEquals(6L, checkpoint(batch, "u"));
    assertTrue(batch.shouldAdvance());
    assertNull(row("u").getValue(3), "generated rows carry no request time");
  }

  @Test
  void olderInstallsWithDuplicateRowsKeepWorkingAndAnswerTheMaximum() {
    Await.result(PgMigrations.migrate(sql.pool(), PgMigrations.MIGRATIONS.subList(0, 1)));
    sql.query("INSERT INTO ackpoint_write_checkpoints (user_id, write_checkpoint, lsns) VALUES"
        + " ('dup', 3, '{\"1\":\"00000000/00000001\"}'), ('dup', 6, '{\"1\":\"00000000/00000001\"}')");
    migrate();
    assertEquals(0, sql.count("SELECT count(*) FROM pg_indexes WHERE indexname = 'ackpoint_write_checkpoints_user_client_key'"));
    assertEquals(1, sql.count("SELECT count(*) FROM pg_indexes WHERE indexname = 'ackpoint_write_checkpoints_user_client_idx'"));

    assertEquals(6L, checkpoint(store(H1, requested("dup", 5)), "dup"));
    assertEquals(List.of(5L, 6L), ids("dup"), "the lower duplicate was raised to the supplied id");
    assertEquals(7L, checkpoint(store(H1, generated("dup")), "dup"));
    assertEquals(9L, checkpoint(store(H2, requested("dup", 9)), "dup"));
    assertEquals(List.of(9L, 9L), ids("dup"));
  }

  private List<Long> ids(String user) {
    List<Long> ids = new ArrayList<>();
    sql.query("SELECT write_checkpoint FROM ackpoint_write_checkpoints WHERE user_id = $1 ORDER BY write_checkpoint", user)
        .forEach(r -> ids.add(r.getLong(0)));
    return ids;
  }

  @Test
  void concurrentBatchesThatShareUsersNeitherDeadlockNorLoseIncrements() {
    migrate();
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
    assertEquals(300, sql.count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE write_checkpoint = 6"));
    assertEquals(300, sql.checkpointRows());
  }

  @Test
  void aLargeBatchIsStoredAndAnsweredForEveryUser() {
    migrate();
    List<CheckpointWrite> writes = new ArrayList<>();
    for (int i = 0; i < 5000; i++) {
      writes.add(i % 2 == 0 ? generated("g" + i) : requested("r" + i, i));
    }
    StoredBatch batch = Await.result(storage.store(H1, writes));
    assertEquals(5000, batch.outcomes().size());
    assertEquals(1L, checkpoint(batch, "g0"));
    assertEquals(4999L, checkpoint(batch, "r4999"));
    assertNotNull(row("r1").getValue(3));
  }

  // The collapse rule, for every pair of request kinds of one user in one batch ("generated, then supplied").

  @Test
  void generatedWithAStaleSuppliedIdGetsANewIdAndTheRowStaysGenerated() {
    migrate();
    store(H1, requested("u", 5));
    markProcessed("u", H1);
    StoredBatch batch = store(H2, new CheckpointWrite(user("u"), true, 3L));
    assertEquals(6L, generatedId(batch, "u"), "a new id, never the already acknowledged 5");
    assertEquals(6L, checkpoint(batch, "u"));
    assertTrue(batch.shouldAdvance());
    Row row = row("u");
    assertEquals(6L, row.getLong(0));
    assertEquals(H2, row.getString(1), "stored with this batch's head");
    assertNull(row.getValue(2));
    assertNull(row.getValue(3), "the generated id holds the row: no request time");
  }

  @Test
  void generatedWithASuppliedIdEqualToTheNewIdShareItAndTheRowIsARequest() {
    migrate();
    store(H1, requested("u", 5));
    markProcessed("u", H1);
    StoredBatch batch = store(H2, new CheckpointWrite(user("u"), true, 6L));
    assertEquals(6L, generatedId(batch, "u"));
    assertEquals(6L, checkpoint(batch, "u"));
    assertEquals(H2, row("u").getString(1));
    assertNotNull(row("u").getValue(3));
  }

  @Test
  void generatedWithAGreaterSuppliedIdGetsTheNextIdAndTheRowTakesTheSuppliedOne() {
    migrate();
    store(H1, requested("u", 5));
    markProcessed("u", H1);
    StoredBatch batch = store(H2, new CheckpointWrite(user("u"), true, 9L));
    assertEquals(6L, generatedId(batch, "u"), "what a supplied id does never changes the generated answer");
    assertEquals(9L, checkpoint(batch, "u"));
    assertEquals(9L, row("u").getLong(0));
    assertEquals(H2, row("u").getString(1), "both answers are at or below the row's id, stored with this head");
    assertNotNull(row("u").getValue(3));
  }

  @Test
  void generatedAndSuppliedForANewUserCreateOneRow() {
    migrate();
    StoredBatch batch = store(H1, new CheckpointWrite(user("new"), true, 4L), new CheckpointWrite(user("new2"), true, 1L));
    assertEquals(1L, generatedId(batch, "new"));
    assertEquals(4L, checkpoint(batch, "new"));
    assertEquals(1L, generatedId(batch, "new2"));
    assertEquals(1L, checkpoint(batch, "new2"));
    assertEquals(2, sql.checkpointRows());
  }

  @Test
  void anExhaustedUserChangesNothingAndTheRestOfItsBatchIsStored() {
    migrate();
    store(H1, requested("max", Long.MAX_VALUE));
    markProcessed("max", H1);
    StoredBatch batch = store(H2, generated("max"), generated("other"), requested("third", 3));
    assertEquals(new WriteOutcome.Exhausted(Long.MAX_VALUE, false), batch.outcomes().get(user("max")));
    assertEquals(1L, generatedId(batch, "other"));
    assertEquals(3L, checkpoint(batch, "third"));
    assertEquals(H1, row("max").getString(1), "the exhausted row keeps its head");
    assertEquals(H1, row("max").getString(2), "and stays processed");
  }

  @Test
  void anExhaustedUsersSuppliedIdIsAnsweredAndAnEqualOneRefreshesItsRequestTime() {
    migrate();
    store(H1, requested("max", Long.MAX_VALUE));
    ageRequestedAt("max");
    OffsetDateTime aged = row("max").getOffsetDateTime(3);
    StoredBatch batch = store(H2, new CheckpointWrite(user("max"), true, Long.MAX_VALUE));
    assertEquals(new WriteOutcome.Exhausted(Long.MAX_VALUE, true), batch.outcomes().get(user("max")));
    assertTrue(row("max").getOffsetDateTime(3).isAfter(aged));
  }

  @Test
  void aClientIdIsItsOwnKeyColumnAndNeverJoinedToTheSub() {
    migrate();
    StoredBatch batch = store(H1, CheckpointWrite.generated(FullUserId.of("a", "b")), generated("a/b"),
        CheckpointWrite.generated(FullUserId.of("a", "b")));
    assertEquals(2, sql.checkpointRows());
    assertEquals(1L, ((WriteOutcome.Stored) batch.outcomes().get(FullUserId.of("a", "b"))).generated());
    assertEquals(1L, generatedId(batch, "a/b"));
    assertEquals(1, sql.count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE user_id = 'a' AND client_id = 'b'"));
    assertEquals(1, sql.count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE user_id = 'a/b' AND client_id = ''"));
  }

  @Test
  void upgradingSplitsJoinedIdsAtTheirLastSlash() {
    Await.result(PgMigrations.migrate(sql.pool(), PgMigrations.MIGRATIONS.subList(0, 4)));
    sql.query("INSERT INTO ackpoint_write_checkpoints (user_id, write_checkpoint, lsns) VALUES"
        + " ('alice/3f1c-uuid', 7, '{}'), ('bob', 2, '{}'), ('team/x/phone', 4, '{}'), ('/lead', 1, '{}'), ('trail/', 1, '{}')");
    migrate();
    assertEquals(List.of("/lead|", "alice|3f1c-uuid", "bob|", "team/x|phone", "trail/|"), keys());
    assertEquals(7L, checkpoint(store(H1, CheckpointWrite.requested(FullUserId.of("alice", "3f1c-uuid"), 7)), "alice", "3f1c-uuid"));
    assertEquals(1, sql.count("SELECT count(*) FROM pg_indexes WHERE indexname = 'ackpoint_write_checkpoints_user_client_key'"));
  }

  @Test
  void markingProcessedAnswersOneReachedPerUserWithItsGreatestId() {
    Await.result(PgMigrations.migrate(sql.pool(), PgMigrations.MIGRATIONS.subList(0, 1)));
    sql.query("INSERT INTO ackpoint_write_checkpoints (user_id, write_checkpoint, lsns) VALUES"
        + " ('dup', 9, '{\"1\":\"00000000/00000001\"}'), ('dup', 4, '{\"1\":\"00000000/00000001\"}'),"
        + " ('solo', 2, '{\"1\":\"00000000/00000001\"}')");
    migrate();
    List<Reached> reached = new ArrayList<>(Await.result(storage.markProcessed(H1)));
    reached.sort(java.util.Comparator.comparing(r -> r.user().userId()));
    assertEquals(List.of(new Reached(user("dup"), 9), new Reached(user("solo"), 2)), reached);
  }

  private static long checkpoint(StoredBatch batch, String userId, String clientId) {
    return ((WriteOutcome.Stored) batch.outcomes().get(FullUserId.of(userId, clientId))).checkpoint();
  }

  private List<String> keys() {
    List<String> keys = new ArrayList<>();
    sql.query("SELECT user_id || '|' || client_id FROM ackpoint_write_checkpoints ORDER BY (user_id || '|' || client_id) COLLATE \"C\"").forEach(r -> keys.add(r.getString(0)));
    return keys;
  }
}
