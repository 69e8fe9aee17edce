package io.ackpoint.storage;

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
  void freshInstallHasAUniqueIndexOnUserId() {
    migrate();
    assertEquals(1, sql.count("SELECT count(*) FROM pg_indexes WHERE indexname = 'ackpoint_write_checkpoints_user_id_key'"));
    assertEquals(0, sql.count("SELECT count(*) FROM pg_indexes WHERE indexname = 'ackpoint_write_checkpoints_user_id_idx'"));
    assertEquals(0, (int) Await.result(PgMigrations.migrate(sql.pool())), "migrations run once");
  }

  @Test
  void generatedIdsStartAtOneAndIncrement() {
    migrate();
    assertEquals(1L, store(H1, CheckpointWrite.generated("u")).checkpoints().get("u"));
    assertEquals(2L, store(H2, CheckpointWrite.generated("u")).checkpoints().get("u"));
    assertEquals(H2, row("u").getString(1));
  }

  @Test
  void aGreaterSuppliedIdReplacesTheHeadAndIsPendingAgain() {
    migrate();
    store(H1, CheckpointWrite.requested("u", 5));
    markProcessed("u", H1);
    StoredBatch batch = store(H2, CheckpointWrite.requested("u", 7));
    assertEquals(7L, batch.checkpoints().get("u"));
    assertTrue(batch.shouldAdvance());
    assertEquals(H2, row("u").getString(1));
    assertNull(row("u").getValue(2));
  }

  @Test
  void anEqualIdOnlyRefreshesRequestedAt() {
    migrate();
    store(H1, CheckpointWrite.requested("u", 5));
    markProcessed("u", H1);
    ageRequestedAt("u");
    OffsetDateTime aged = row("u").getOffsetDateTime(3);
    StoredBatch batch = store(H2, CheckpointWrite.requested("u", 5));
    assertEquals(5L, batch.checkpoints().get("u"));
    assertFalse(batch.shouldAdvance(), "already processed: no marker needed");
    Row after = row("u");
    assertEquals(H1, after.getString(1));
    assertEquals(H1, after.getString(2));
    assertTrue(after.getOffsetDateTime(3).isAfter(aged));
  }

  @Test
  void aLowerIdChangesNothingAndAnswersTheStoredId() {
    migrate();
    store(H1, CheckpointWrite.requested("u", 5));
    markProcessed("u", H1);
    ageRequestedAt("u");
    OffsetDateTime aged = row("u").getOffsetDateTime(3);
    StoredBatch batch = store(H2, CheckpointWrite.requested("u", 3));
    assertEquals(5L, batch.checkpoints().get("u"));
    assertFalse(batch.shouldAdvance());
    assertEquals(H1, row("u").getString(1));
    assertEquals(aged, row("u").getOffsetDateTime(3));
  }

  @Test
  void aRetryThatMatchesAPendingRowAsksForAMarkerAgain() {
    migrate();
    store(H1, CheckpointWrite.requested("u", 5));
    assertTrue(store(H2, CheckpointWrite.requested("u", 5)).shouldAdvance(), "equal retry of a pending row");
    assertTrue(store(H2, CheckpointWrite.requested("u", 4)).shouldAdvance(), "stale retry of a pending row");
    markProcessed("u", H2);
    assertFalse(store(H2, CheckpointWrite.requested("u", 5)).shouldAdvance());
    assertFalse(store(H2, CheckpointWrite.requested("u", 4)).shouldAdvance());
  }

  @Test
  void aBatchAsksForAMarkerWhenAnyOfItsCheckpointsIsPending() {
    migrate();
    store(H1, CheckpointWrite.requested("done", 5));
    markProcessed("done", H1);
    assertTrue(store(H2, CheckpointWrite.requested("done", 5), CheckpointWrite.requested("new", 1)).shouldAdvance());
  }

  @Test
  void aGeneratedIdOnAProcessedRequestRowMakesItAGeneratedPendingRow() {
    migrate();
    store(H1, CheckpointWrite.requested("u", 5));
    markProcessed("u", H1);
    StoredBatch batch = store(H2, CheckpointWrite.generated("u"));
    assertEquals(6L, batch.checkpoints().get("u"));
    assertTrue(batch.shouldAdvance());
    assertNull(row("u").getValue(3), "generated rows carry no request time");
  }

  @Test
  void olderInstallsWithDuplicateRowsKeepWorkingAndAnswerTheMaximum() {
    Await.result(PgMigrations.migrate(sql.pool(), PgMigrations.MIGRATIONS.subList(0, 1)));
    sql.query("INSERT INTO ackpoint_write_checkpoints (user_id, write_checkpoint, lsns) VALUES"
        + " ('dup', 3, '{\"1\":\"00000000/00000001\"}'), ('dup', 6, '{\"1\":\"00000000/00000001\"}')");
    migrate();
    assertEquals(0, sql.count("SELECT count(*) FROM pg_indexes WHERE indexname = 'ackpoint_write_checkpoints_user_id_key'"));
    assertEquals(1, sql.count("SELECT count(*) FROM pg_indexes WHERE indexname = 'ackpoint_write_checkpoints_user_id_idx'"));

    assertEquals(6L, store(H1, CheckpointWrite.requested("dup", 5)).checkpoints().get("dup"));
    assertEquals(List.of(5L, 6L), ids("dup"), "the lower duplicate was raised to the supplied id");
    assertEquals(7L, store(H1, CheckpointWrite.generated("dup")).checkpoints().get("dup"));
    assertEquals(9L, store(H2, CheckpointWrite.requested("dup", 9)).checkpoints().get("dup"));
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
      shuffled.forEach(u -> writes.add(CheckpointWrite.generated(u)));
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
      writes.add(i % 2 == 0 ? CheckpointWrite.generated("g" + i) : CheckpointWrite.requested("r" + i, i));
    }
    StoredBatch batch = Await.result(storage.store(H1, writes));
    assertEquals(5000, batch.checkpoints().size());
    assertEquals(1L, batch.checkpoints().get("g0"));
    assertEquals(4999L, batch.checkpoints().get("r4999"));
    assertNotNull(row("r1").getValue(3));
  }
}
