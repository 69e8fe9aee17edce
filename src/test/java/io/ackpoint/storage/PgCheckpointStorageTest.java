package io.ackpoint.storage;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.CustomCheckpoint;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.Reached;
import io.ackpoint.core.StoredBatch;
import io.ackpoint.core.WriteOutcome;
import io.ackpoint.source.PgReplicationSource;
import io.ackpoint.support.Await;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestDatabase;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.ackpoint.storage.StorageBackend.H1;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The storage contract on a real PostgreSQL, and what is PostgreSQL's own: its schema and migrations. */
class PgCheckpointStorageTest extends CheckpointStorageContract {

  private Sql sql;
  private Vertx vertx;

  @Override
  StorageBackend open(Vertx vertx) {
    this.vertx = vertx;
    sql = new Sql(vertx, TestDatabase.freshDatabase());
    PgCheckpointStorage pg = storageOn(sql.pool());
    return new StorageBackend() {
      @Override
      public CheckpointStorage storage() {
        return pg;
      }

      @Override
      public AcknowledgementHistory history() {
        return new PgAcknowledgementHistory(sql.pool());
      }

      @Override
      public void migrate() {
        Await.result(PgMigrations.migrate(sql.pool()));
      }

      @Override
      public void migrateHolding(List<StorageBackend.Seed> seeds) {
        Await.result(PgMigrations.migrate(sql.pool(), PgMigrations.MIGRATIONS.subList(0, 1)));
        for (StorageBackend.Seed s : seeds) {
          sql.query("INSERT INTO ackpoint_write_checkpoints (user_id, write_checkpoint, lsns) VALUES ($1, $2, $3)",
              s.userId(), s.checkpoint(), new JsonObject().put("1", s.head()));
        }
        migrate();
      }

      @Override
      public StorageBackend.Row row(String user) {
        io.vertx.sqlclient.Row row = sql.query("SELECT write_checkpoint, lsns->>'1', processed_at_lsn, checkpoint_requested_at"
            + " FROM ackpoint_write_checkpoints WHERE user_id = $1 AND client_id = ''", user).iterator().next();
        OffsetDateTime requested = row.getOffsetDateTime(3);
        return new StorageBackend.Row(row.getLong(0), row.getString(1), row.getString(2),
            requested == null ? null : requested.toInstant());
      }

      @Override
      public List<Long> ids(String user) {
        List<Long> ids = new ArrayList<>();
        sql.query("SELECT write_checkpoint FROM ackpoint_write_checkpoints WHERE user_id = $1 AND client_id = ''"
            + " ORDER BY write_checkpoint", user).forEach(r -> ids.add(r.getLong(0)));
        return ids;
      }

      @Override
      public long rows(FullUserId user) {
        return sql.count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE user_id = $1 AND client_id = $2",
            user.userId(), user.clientId());
      }

      @Override
      public long rows() {
        return sql.checkpointRows();
      }

      @Override
      public void markProcessed(String user, String position) {
        sql.query("UPDATE ackpoint_write_checkpoints SET processed_at_lsn = $2 WHERE user_id = $1", user, position);
      }

      @Override
      public void setRequestedAt(String user, Instant at) {
        sql.query("UPDATE ackpoint_write_checkpoints SET checkpoint_requested_at = $2 WHERE user_id = $1",
            user, OffsetDateTime.ofInstant(at, ZoneOffset.UTC));
      }

      @Override
      public void close() {
        sql.close();
      }
    };
  }

  /** The storage under test: it takes {@link PgStatements#UPSERT_BATCH} where it can. */
  PgCheckpointStorage storageOn(Pool pool) {
    return new PgCheckpointStorage(pool);
  }

  /** Whether the storage under test upserts on a table with its unique key. */
  boolean upsertsOnKeyedTable() {
    return true;
  }

  private long indexes(String... names) {
    return sql.count("SELECT count(*) FROM pg_indexes WHERE indexname = ANY($1)", (Object) names);
  }

  @Test
  void freshInstallHasAUniqueIndexOnTheFullUserId() {
    backend.migrate();
    assertEquals(1, indexes("ackpoint_write_checkpoints_user_client_key"));
    assertEquals(0, indexes("ackpoint_write_checkpoints_user_id_key", "ackpoint_write_checkpoints_user_id_idx",
        "ackpoint_write_checkpoints_user_client_idx"));
    assertEquals(0, (int) Await.result(PgMigrations.migrate(sql.pool())), "migrations run once");
  }

  @Test
  void anInstallHoldingDuplicatesKeepsItsPlainIndex() {
    backend.migrateHolding(List.of(new StorageBackend.Seed("dup", 3, H1), new StorageBackend.Seed("dup", 6, H1)));
    assertEquals(0, indexes("ackpoint_write_checkpoints_user_client_key"));
    assertEquals(1, indexes("ackpoint_write_checkpoints_user_client_idx"));
  }

  /**
   * On a table without its unique key, a batch that creates a user while another batch's creation of
   * that user is not yet committed waits for it and raises its row, rather than creating a second
   * row of the same id at its own head, which replication passing the first head would have
   * acknowledged (two such rows were made by two sessions in a review of the statements).
   */
  @Test
  void withoutTheUniqueKeyTwoBatchesCreatingOneUserAtOnceMakeOneRowAndTwoIds() {
    backend.migrateHolding(List.of(new StorageBackend.Seed("dup", 3, H1), new StorageBackend.Seed("dup", 6, H1)));
    FullUserId user = StorageBackend.user("created-twice");
    // Each row's insert waits for a lock this test holds, keeping the first batch's transaction open.
    sql.query("CREATE FUNCTION held() RETURNS trigger LANGUAGE plpgsql AS $$"
        + " BEGIN PERFORM pg_advisory_xact_lock(4711); RETURN NEW; END $$");
    sql.query("CREATE TRIGGER held AFTER INSERT ON ackpoint_write_checkpoints FOR EACH ROW EXECUTE FUNCTION held()");
    SqlConnection holder = Await.result(sql.pool().getConnection());
    try {
      Await.result(holder.query("SELECT pg_advisory_lock(4711)").execute());
      Future<StoredBatch> first = storage().store(H1, List.of(CheckpointWrite.generated(user)));
      awaitLockWaiters(1);
      Future<StoredBatch> second = storage().store(StorageBackend.H2, List.of(CheckpointWrite.generated(user)));
      // The second waits for the first (or, without the locks of LOCK_USERS, for this test's lock in its own insert).
      awaitLockWaiters(2);
      Await.result(holder.query("SELECT pg_advisory_unlock(4711)").execute());
      List<Long> answers = new ArrayList<>();
      for (Future<StoredBatch> batch : List.of(first, second)) {
        answers.add(((WriteOutcome.Stored) Await.result(batch).outcomes().get(user)).checkpoint());
      }
      assertEquals(List.of(1L, 2L), answers.stream().sorted().toList());
      assertEquals(1, backend.rows(user), "one row of the user");
    } finally {
      Await.result(holder.close());
    }
  }

  /** Polls until {@code n} sessions of this database wait for an advisory lock: nothing else tells. */
  private void awaitLockWaiters(int n) {
    for (int poll = 0; poll < 500; poll++) {
      if (sql.count("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
          + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())") >= n) {
        return;
      }
      Await.result(vertx.timer(20));
    }
    throw new AssertionError(n + " sessions never waited for a lock");
  }

  /** No migration drops the unique key, but an operator may while Ackpoint runs: batches go on. */
  @Test
  void aUniqueKeyDroppedWhileStorageRunsLeavesBatchesToTheStatementWithoutIt() {
    backend.migrate();
    FullUserId u = StorageBackend.user("u");
    store(H1, CheckpointWrite.generated(u));
    sql.query("DROP INDEX ackpoint_write_checkpoints_user_client_key");
    sql.query("CREATE INDEX ackpoint_write_checkpoints_user_client_idx ON ackpoint_write_checkpoints (user_id, client_id)");
    assertEquals(new WriteOutcome.Stored(2, 2, true, H1), outcome(store(H1, CheckpointWrite.generated(u)), u));
  }

  @Test
  void upgradingSplitsJoinedIdsAtTheirLastSlash() {
    Await.result(PgMigrations.migrate(sql.pool(), PgMigrations.MIGRATIONS.subList(0, 4)));
    sql.query("INSERT INTO ackpoint_write_checkpoints (user_id, write_checkpoint, lsns) VALUES"
        + " ('alice/3f1c-uuid', 7, '{}'), ('bob', 2, '{}'), ('team/x/phone', 4, '{}'), ('/lead', 1, '{}'), ('trail/', 1, '{}')");
    backend.migrate();
    assertEquals(List.of("/lead|", "alice|3f1c-uuid", "bob|", "team/x|phone", "trail/|"), keys());
    StoredBatch batch = store(H1, CheckpointWrite.requested(FullUserId.of("alice", "3f1c-uuid"), 7));
    assertEquals(7L, ((WriteOutcome.Stored) batch.outcomes().get(FullUserId.of("alice", "3f1c-uuid"))).checkpoint());
    assertEquals(1, indexes("ackpoint_write_checkpoints_user_client_key"));
  }

  @Test
  void noIndexOfTheCheckpointsTableCoversAColumnThatAWriteOrAnAcknowledgementChanges() {
    backend.migrate();
    List<String> indexed = new ArrayList<>();
    sql.query("""
        SELECT i.indexrelid::regclass::text || ':' || coalesce(string_agg(a.attname, ',' ORDER BY a.attname), '')
               || CASE WHEN i.indexprs IS NULL AND i.indpred IS NULL THEN '' ELSE ':expression or predicate' END
          FROM pg_index i LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
         WHERE i.indrelid = 'ackpoint_write_checkpoints'::regclass
         GROUP BY i.indexrelid, i.indexprs, i.indpred ORDER BY 1""").forEach(r -> indexed.add(r.getString(0)));
    // Both updates are then HOT: no index entries, one heap record each.
    assertEquals(List.of("ackpoint_write_checkpoints_pkey:id", "ackpoint_write_checkpoints_user_client_key:client_id,user_id"),
        indexed);
  }

  @Test
  void aCheckpointPendingWhenACrashEmptiedThePendingQueueIsStillAcknowledged() {
    backend.migrate();
    store(H1, CheckpointWrite.requested(FullUserId.of("t", "c"), 1));
    Await.result(backend.storage().markProcessed(H1));
    assertEquals(1, sql.count("SELECT count(*) FROM ackpoint_pending WHERE head = '' AND id = 0"), "the queue is proven complete");
    store(H1, CheckpointWrite.requested(FullUserId.of("u", "c"), 5));
    // What crash recovery does to an unlogged table.
    sql.query("TRUNCATE ackpoint_pending");
    store(H1, CheckpointWrite.requested(FullUserId.of("v", "c"), 3));
    assertEquals(List.of(new Reached(FullUserId.of("u", "c"), 5), new Reached(FullUserId.of("v", "c"), 3)),
        sorted(Await.result(backend.storage().markProcessed(H1))));
    assertEquals(List.of(), Await.result(backend.storage().markProcessed(H1)), "each once");
  }

  /**
   * Where storage is the source too, a position beyond the database's own head was passed on another
   * server: the source went back (restored, or replaced by a server that was behind), and the rows
   * stored since, at the new server's heads, are not marked by it.
   */
  @Test
  void whereStorageIsTheSourceAPositionBeyondTheDatabasesHeadMarksNothing() {
    backend.migrate();
    PgCheckpointStorage storage = new PgCheckpointStorage(sql.pool());
    storage.atCurrentHeadMarkedWithin("pg_logical_emit_message(true, 'test', 'marker', true)");
    store(H1, CheckpointWrite.requested(FullUserId.of("u", "c"), 5));
    String beyond = "FFFFFF00/00000000";
    Throwable refused = Await.result(storage.markProcessed(beyond).<Throwable>map(marked -> null).otherwise(e -> e));
    assertTrue(refused instanceof SourceBehindException, refused.toString());
    assertFalse(storage.mayHaveMarked(refused));
    assertEquals(1, sql.count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE processed_at_lsn IS NULL"), "still pending");
    assertEquals(List.of(new Reached(FullUserId.of("u", "c"), 5)), Await.result(storage.markProcessed(H1)),
        "a position this database passed is applied as ever");
  }

  /** A row without a head (older installs, a hand edit) is never acknowledged, and leaves the others be. */
  @Test
  void aPendingRowWhoseHeadIsNullDoesNotStopTheRebuiltQueue() {
    backend.migrate();
    sql.query("INSERT INTO ackpoint_write_checkpoints (user_id, client_id, write_checkpoint, lsns) VALUES ('legacy', '', 4, '{\"1\": null}')");
    store(H1, CheckpointWrite.requested(FullUserId.of("u", "c"), 5));
    sql.query("TRUNCATE ackpoint_pending");
    assertEquals(List.of(new Reached(FullUserId.of("u", "c"), 5)), Await.result(backend.storage().markProcessed(H1)));
    assertEquals(null, backend.row("legacy").processedAt());
  }

  @Test
  void theRebuiltQueueHoldsEveryPendingRowAcrossItsWindows() {
    backend.migrate();
    PgCheckpointStorage smallWindows = new PgCheckpointStorage(sql.pool(), 2);
    List<CheckpointWrite> writes = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      writes.add(CheckpointWrite.requested(FullUserId.of("u" + i, "c"), i + 1));
    }
    Await.result(smallWindows.store(H1, writes));
    Await.result(smallWindows.markProcessed(H1));
    store(H1, CheckpointWrite.requested(FullUserId.of("u3", "c"), 40), CheckpointWrite.requested(FullUserId.of("u6", "c"), 70));
    sql.query("TRUNCATE ackpoint_pending");
    assertEquals(List.of(new Reached(FullUserId.of("u3", "c"), 40), new Reached(FullUserId.of("u6", "c"), 70)),
        sorted(Await.result(smallWindows.markProcessed(H1))), "only the rows still pending, from every window");
    assertEquals(0, sql.count("SELECT count(*) FROM ackpoint_pending WHERE head = '' AND id < 0"), "no rebuild left begun");
  }

  /**
   * One application transaction may carry any number of custom checkpoints; one statement for all
   * of them could outlast the statement timeout, be cancelled, and be sent again by the slot for
   * ever. They are stored a bounded number of users per statement (each its own transaction).
   */
  @Test
  void aTransactionsCustomCheckpointsAreStoredInStatementsOfBoundedSize() {
    backend.migrate();
    PgCheckpointStorage smallStatements = new PgCheckpointStorage(sql.pool(), PgCheckpointStorage.REBUILD_WINDOW, 3);
    List<CustomCheckpoint> transaction = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      transaction.add(new CustomCheckpoint(FullUserId.of("u" + i, "c"), i + 1, false));
    }
    Await.result(smallStatements.storeCustom(H1, transaction));
    assertEquals(3, sql.count("SELECT count(DISTINCT xmin::text) FROM ackpoint_write_checkpoints"), "3 statements of at most 3 users");
    assertEquals(7, Await.result(smallStatements.markProcessed(H1)).size());
  }

  /**
   * A position after a bulk transaction or a long outage is due for any number of rows, more than
   * one statement marks within the statement timeout (which would then cancel it at every retry):
   * they are marked a bounded number per statement, all of them, each user told once.
   */
  @Test
  void aPositionDueForManyRowsMarksThemInStatementsOfBoundedSize() {
    backend.migrate();
    PgCheckpointStorage smallStatements = new PgCheckpointStorage(sql.pool(), 3);
    assertEquals(List.of(), Await.result(smallStatements.markProcessed(H1)), "proves the empty queue complete");
    List<CheckpointWrite> writes = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      writes.add(CheckpointWrite.requested(FullUserId.of("u" + i, "c"), i + 1));
    }
    Await.result(smallStatements.store(H1, writes));
    assertEquals(7, Await.result(smallStatements.markProcessed(H1)).size());
    assertEquals(3, sql.count("SELECT count(DISTINCT xmin::text) FROM ackpoint_write_checkpoints"), "3 statements of at most 3 rows");
    assertEquals(List.of(), Await.result(smallStatements.markProcessed(H1)));
  }

  /**
   * A user who asks again before replication reached its last checkpoint raises its row to a later
   * head. The position that passes the earlier head still acknowledges the earlier id: told to the
   * streams, and answered by storage from then on (a user asking faster than replication keeps up
   * is not kept waiting for ever; and the engine's early release of that id is never contradicted).
   */
  @Test
  void anIdWhoseHeadAPositionPassedIsAcknowledgedThoughItsRowWasRaisedSince() {
    backend.migrate();
    FullUserId u = StorageBackend.user("u");
    store(H1, CheckpointWrite.generated(u));
    store(StorageBackend.H3, CheckpointWrite.generated(u));
    assertEquals(List.of(new Reached(u, 1)), Await.result(backend.storage().markProcessed(StorageBackend.H2)));
    assertEquals(new Acknowledged(1, null), Await.result(backend.storage().latestAcknowledged(u)));
    assertEquals(null, backend.row("u").processedAt(), "id 2 still waits for its own head");
    assertEquals(List.of(new Reached(u, 2)), Await.result(backend.storage().markProcessed(StorageBackend.H3)));
    assertEquals(new Acknowledged(2, StorageBackend.H3), Await.result(backend.storage().latestAcknowledged(u)));
  }

  /**
   * The same, when the write that raises the row commits while the acknowledgement statement waits
   * for the row's lock (its snapshot still shows the row as it was).
   */
  @Test
  void anIdWhoseHeadAPositionPassedIsAcknowledgedThoughItsRowWasRaisedDuringTheStatement() throws InterruptedException {
    backend.migrate();
    FullUserId u = StorageBackend.user("u");
    store(H1, CheckpointWrite.generated(u));
    assertEquals(List.of(new Reached(u, 1)), markWhileRaising(u, StorageBackend.H3, StorageBackend.H2));
    assertEquals(new Acknowledged(1, null), Await.result(backend.storage().latestAcknowledged(u)));
  }

  /**
   * A row already acknowledged whose entry outlived that (see {@link #leaveEntriesAt}), raised
   * while the acknowledgement statement waits for its lock, to a head the position passed: decided
   * on the locked version like any pending row, it is acknowledged by this statement.
   */
  @Test
  void anAcknowledgedRowRaisedDuringTheStatementToAHeadThePositionPassedIsAcknowledgedByIt() throws InterruptedException {
    FullUserId u = acknowledgedWithALeftoverEntry();
    assertEquals(List.of(new Reached(u, 2)), markWhileRaising(u, StorageBackend.H2, StorageBackend.H3));
    assertEquals(1, sql.count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE processed_at_lsn = $1", StorageBackend.H3));
  }

  /** The same, raised to a head the position did not pass: it stays pending, and the next position acknowledges it. */
  @Test
  void anAcknowledgedRowRaisedDuringTheStatementPastThePositionStaysPending() throws InterruptedException {
    FullUserId u = acknowledgedWithALeftoverEntry();
    assertEquals(List.of(), markWhileRaising(u, StorageBackend.H3, StorageBackend.H2));
    assertEquals(new Acknowledged(1, null), Await.result(backend.storage().latestAcknowledged(u)));
    assertEquals(List.of(new Reached(u, 2)), Await.result(backend.storage().markProcessed(StorageBackend.H3)));
  }

  /**
   * Acknowledges {@code position} while a batch that raises {@code u} at {@code head} holds the
   * user's row, and commits the batch once the acknowledgement statement waits for that lock.
   */
  private List<Reached> markWhileRaising(FullUserId u, String head, String position) throws InterruptedException {
    SqlConnection conn = Await.result(sql.pool().getConnection());
    try {
      Transaction raising = Await.result(conn.begin());
      if (upsertsOnKeyedTable()) {
        Await.result(conn.preparedQuery(PgStatements.UPSERT_BATCH).execute(Tuple.of(new String[] {u.userId()},
            new String[] {u.clientId()}, new Long[] {null}, head)));
      } else {
        Await.result(conn.preparedQuery(PgStatements.STORE_BATCH).execute(Tuple.of(new String[] {u.userId()},
            new String[] {u.clientId()}, new Long[] {null}, new Boolean[] {true}, head)));
      }
      Future<List<Reached>> marked = backend.storage().markProcessed(position);
      // Nothing to await: the statement's wait for the lock is seen in pg_stat_activity only.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (sql.count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%dequeued%'") == 0) {
        assertTrue(System.nanoTime() < deadline, "the acknowledgement statement never waited for the row");
        Thread.sleep(10);
      }
      Await.result(raising.commit());
      return Await.result(marked);
    } finally {
      Await.result(conn.close());
    }
  }

  /** User u, its checkpoint 1 acknowledged at H1, and an entry of its row still queued at H1. */
  private FullUserId acknowledgedWithALeftoverEntry() {
    backend.migrate();
    FullUserId u = StorageBackend.user("u");
    store(H1, CheckpointWrite.generated(u));
    assertEquals(List.of(new Reached(u, 1)), Await.result(backend.storage().markProcessed(H1)));
    leaveEntriesAt(H1);
    return u;
  }

  /**
   * Queues an entry at {@code head} for every row, as an acknowledgement statement leaves one when it
   * acknowledges a row that a write its snapshot missed had raised (it did not take that write's entry).
   */
  private void leaveEntriesAt(String head) {
    sql.query("INSERT INTO ackpoint_pending (id, head, checkpoint) SELECT id, $1, write_checkpoint FROM ackpoint_write_checkpoints", head);
  }

  /**
   * The queue may still hold an entry of a row already acknowledged (see {@link #leaveEntriesAt}):
   * a later position takes the entry and leaves the row alone, acknowledged at the position that
   * first passed it, and nobody is told again.
   */
  @Test
  void aLeftoverEntryOfAnAcknowledgedRowChangesNothing() {
    FullUserId u = acknowledgedWithALeftoverEntry();
    assertEquals(List.of(), Await.result(backend.storage().markProcessed(StorageBackend.H2)));
    assertEquals(1, sql.count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE processed_at_lsn = $1", H1));
    assertEquals(0, sql.count("SELECT count(*) FROM ackpoint_pending WHERE head > ''"), "the entry taken");
  }

  /**
   * A prepared statement runs on a generic plan from its sixth execution, and a generic plan knows
   * no CTE's size: two CTEs joined to each other became a nested loop over both (10,000 rows of one
   * position: 5 s instead of 0.1 s). So did a CTE joined to the checkpoints table filtered on a
   * column whose statistics say it is almost never null: the pending rows, read by a scan of the
   * table, each scanned the whole CTE (200 rows due: 40,000 comparisons, most of the statement).
   */
  @Test
  void theAcknowledgementStatementsGenericPlanScansNoCteOncePerRow() {
    backend.migrate();
    // The statistics of a table in use: a thousand users, each acknowledged.
    sql.query("INSERT INTO ackpoint_write_checkpoints (user_id, client_id, write_checkpoint, lsns, processed_at_lsn)"
        + " SELECT 'u' || g, 'c', 1, jsonb_build_object('1', '" + H1 + "'), '" + H1 + "' FROM generate_series(1, 1000) g");
    sql.query("ANALYZE ackpoint_write_checkpoints");
    List<String> joined = new ArrayList<>();
    cteJoins(genericPlan("mark(text, int, bool)", PgStatements.MARK_PROCESSED, "mark('FFFFFFFF/FFFFFFFF', 10000, false)"), joined);
    assertEquals(List.of(), joined);
  }

  /**
   * The same for the upsert, whose read of the rows it left as they were must also wait for every
   * row written (it locks them) and is skipped when every write was answered: a one-time filter on
   * the count of the rows written.
   */
  @Test
  void theUpsertsGenericPlanScansNoCteOncePerRowAndReadsBackOnlyWhenAWriteWasLeft() {
    backend.migrate();
    sql.query("INSERT INTO ackpoint_write_checkpoints (user_id, client_id, write_checkpoint, lsns, processed_at_lsn)"
        + " SELECT 'u' || g, 'c', 1, jsonb_build_object('1', '" + H1 + "'), '" + H1 + "' FROM generate_series(1, 1000) g");
    sql.query("ANALYZE ackpoint_write_checkpoints");
    JsonObject plan = genericPlan("batch(text[], text[], int8[], text)", PgStatements.UPSERT_BATCH,
        "batch(ARRAY['u1'], ARRAY['c'], ARRAY[NULL::int8], '" + H1 + "')");
    List<String> joined = new ArrayList<>();
    cteJoins(plan, joined);
    assertEquals(List.of(), joined);
    JsonObject missing = subplan(plan, "CTE missing");
    assertTrue(missing != null && missing.containsKey("One-Time Filter"), "the writes left are found behind a one-time filter: " + missing);
  }

  /** The upsert that writes the source's marker in its transaction (a standalone Ackpoint's) plans as the upsert does. */
  @Test
  void theUpsertWithItsMarkersGenericPlanScansNoCteOncePerRow() {
    backend.migrate();
    sql.query("INSERT INTO ackpoint_write_checkpoints (user_id, client_id, write_checkpoint, lsns, processed_at_lsn)"
        + " SELECT 'u' || g, 'c', 1, jsonb_build_object('1', '" + H1 + "'), '" + H1 + "' FROM generate_series(1, 1000) g");
    sql.query("ANALYZE ackpoint_write_checkpoints");
    JsonObject plan = genericPlan("batch(text[], text[], int8[])",
        PgStatements.upsertBatchAtCurrentHead(PgReplicationSource.MARKER_IN_TRANSACTION),
        "batch(ARRAY['u1'], ARRAY['c'], ARRAY[NULL::int8])");
    List<String> joined = new ArrayList<>();
    cteJoins(plan, joined);
    assertEquals(List.of(), joined);
  }

  /**
   * Custom checkpoints meet their rows in the batches' key order (so the two queue up on shared
   * users instead of deadlocking): the insert takes its rows sorted by the full user id.
   */
  @Test
  void customCheckpointsMeetTheirRowsInKeyOrder() {
    backend.migrate();
    JsonObject plan = genericPlan("custom(text[], text[], int8[], bool[], jsonb)", PgStatements.UPSERT_CUSTOM,
        "custom(ARRAY['u1', 'u0'], ARRAY['c', 'c'], ARRAY[2, 3]::int8[], ARRAY[true, false], '{\"1\": \"" + H1 + "\"}')");
    JsonObject insert = subplan(plan, "CTE written");
    assertTrue(insert != null && "Insert".equals(insert.getString("Operation")), "the CTE written inserts: " + plan);
    JsonObject sort = insert.getJsonArray("Plans").getJsonObject(0);
    while (!"Sort".equals(sort.getString("Node Type")) && sort.getJsonArray("Plans", new JsonArray()).size() == 1) {
      sort = sort.getJsonArray("Plans").getJsonObject(0); // through the subquery's scan
    }
    assertEquals("Sort", sort.getString("Node Type"), insert.encodePrettily());
    assertEquals(List.of("r.user_id", "r.client_id"), sort.getJsonArray("Sort Key").getList());
  }

  /** The generic plan of {@code statement}, prepared as {@code signature} and run as {@code execution}. */
  private JsonObject genericPlan(String signature, String statement, String execution) {
    SqlConnection conn = Await.result(sql.pool().getConnection());
    try {
      Await.result(conn.query("SET plan_cache_mode = force_generic_plan").execute());
      Await.result(conn.query("PREPARE " + signature + " AS " + statement).execute());
      JsonArray plan = new JsonArray(Await.result(conn.query("EXPLAIN (FORMAT JSON) EXECUTE " + execution)
          .execute()).iterator().next().getValue(0).toString());
      return plan.getJsonObject(0).getJsonObject("Plan");
    } finally {
      Await.result(conn.close());
    }
  }

  /** The node of {@code node}'s tree that computes the subplan {@code name}, or null. */
  private static JsonObject subplan(JsonObject node, String name) {
    if (name.equals(node.getString("Subplan Name"))) {
      return node;
    }
    JsonArray children = node.getJsonArray("Plans", new JsonArray());
    for (int i = 0; i < children.size(); i++) {
      JsonObject found = subplan(children.getJsonObject(i), name);
      if (found != null) {
        return found;
      }
    }
    return null;
  }

  /**
   * Collects every join of {@code node}'s tree whose two sides both read a CTE, and every nested loop
   * whose inner side, run again for each outer row, reads a whole CTE or a whole table.
   */
  private static void cteJoins(JsonObject node, List<String> joined) {
    JsonArray children = node.getJsonArray("Plans", new JsonArray());
    if (node.getString("Node Type").equals("Nested Loop") && children.size() == 2) {
      String inner = wholeRead(children.getJsonObject(1));
      if (inner != null) {
        joined.add("Nested Loop reading " + inner + " per row");
      }
    }
    if (node.getString("Node Type").endsWith("Join") || node.getString("Node Type").equals("Nested Loop")) {
      List<String> ctes = new ArrayList<>();
      for (int i = 0; i < children.size(); i++) {
        String cte = cteRead(children.getJsonObject(i));
        if (cte != null) {
          ctes.add(cte);
        }
      }
      if (ctes.size() >= 2) {
        joined.add(node.getString("Node Type") + " of " + ctes);
      }
    }
    for (int i = 0; i < children.size(); i++) {
      cteJoins(children.getJsonObject(i), joined);
    }
  }

  /** The CTE or table a subtree reads as a whole (through a hash, a sort, an aggregate), or null. */
  private static String wholeRead(JsonObject node) {
    if (node.getString("Node Type").equals("Seq Scan")) {
      return "table " + node.getString("Relation Name");
    }
    JsonArray children = node.getJsonArray("Plans", new JsonArray());
    return children.size() == 1 ? wholeRead(children.getJsonObject(0)) : cteRead(node);
  }

  /** The CTE a subtree reads as a whole (through a hash, a sort, an aggregate), or null. */
  private static String cteRead(JsonObject node) {
    if (node.getString("Node Type").equals("CTE Scan")) {
      return node.getString("CTE Name");
    }
    JsonArray children = node.getJsonArray("Plans", new JsonArray());
    return children.size() == 1 ? cteRead(children.getJsonObject(0)) : null;
  }

  /** The head each pending user waits for comes with the batch: the engine releases it from memory. */
  @Test
  void aBatchAnswersTheHeadEachPendingUserWaitsFor() {
    backend.migrate();
    FullUserId u = FullUserId.of("u", "c");
    assertEquals(new WriteOutcome.Stored(1, 1, true, StorageBackend.H2), outcome(store(StorageBackend.H2, CheckpointWrite.generated(u)), u));
    assertEquals(new WriteOutcome.Stored(2, 2, true, StorageBackend.H2), outcome(store(H1, CheckpointWrite.generated(u)), u),
        "a raised row keeps its later head");
    Await.result(backend.storage().markProcessed(StorageBackend.H2));
    assertEquals(new WriteOutcome.Stored(2, 0, false, null), outcome(store(StorageBackend.H3, CheckpointWrite.requested(u, 2)), u),
        "nothing to wait for");
  }

  /** A row that a lower supplied id leaves as it is answers the head it waits for, read back with its lock. */
  @Test
  void aLowerSuppliedIdAnswersTheHeadThePendingRowWaitsFor() {
    backend.migrate();
    FullUserId u = FullUserId.of("u", "c");
    store(StorageBackend.H2, CheckpointWrite.requested(u, 5));
    assertEquals(new WriteOutcome.Stored(5, 0, true, StorageBackend.H2), outcome(store(StorageBackend.H3, CheckpointWrite.requested(u, 3)), u));
  }

  /** A pending row refreshed by its own id is queued once more: the acknowledgement still tells it once and empties the queue. */
  @Test
  void aPendingRowRefreshedByItsOwnIdIsAcknowledgedOnce() {
    backend.migrate();
    FullUserId u = FullUserId.of("u", "c");
    store(H1, CheckpointWrite.requested(u, 5));
    store(H1, CheckpointWrite.requested(u, 5));
    assertEquals(List.of(new Reached(u, 5)), Await.result(backend.storage().markProcessed(H1)));
    assertEquals(List.of(), Await.result(backend.storage().markProcessed(StorageBackend.H2)));
    assertEquals(0, sql.count("SELECT count(*) FROM ackpoint_pending WHERE head > ''"));
  }

  private static WriteOutcome outcome(StoredBatch batch, FullUserId user) {
    return batch.outcomes().get(user);
  }

  @Test
  void rowsPendingBeforeTheUpgradeToThePendingQueueAreAcknowledged() {
    Await.result(PgMigrations.migrate(sql.pool(), PgMigrations.MIGRATIONS.subList(0, 5)));
    sql.query("INSERT INTO ackpoint_write_checkpoints (user_id, client_id, write_checkpoint, lsns) VALUES ('u', 'c', 4, $1)",
        new JsonObject().put("1", H1));
    backend.migrate();
    assertEquals(List.of(new Reached(FullUserId.of("u", "c"), 4)), Await.result(backend.storage().markProcessed(H1)));
  }

  private static List<Reached> sorted(List<Reached> reached) {
    List<Reached> copy = new ArrayList<>(reached);
    copy.sort(java.util.Comparator.comparing(r -> r.user().userId()));
    return copy;
  }

  private List<String> keys() {
    List<String> keys = new ArrayList<>();
    sql.query("SELECT user_id || '|' || client_id FROM ackpoint_write_checkpoints ORDER BY (user_id || '|' || client_id) COLLATE \"C\"")
        .forEach(r -> keys.add(r.getString(0)));
    return keys;
  }
}
