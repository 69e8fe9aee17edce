package io.ackpoint.storage;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.HeadedBatch;
import io.ackpoint.core.WriteOutcome;
import io.ackpoint.source.Lsn;
import io.ackpoint.source.PgReplicationSource;
import io.ackpoint.support.TestDatabase;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Source and storage one PostgreSQL database: a batch is one statement that reads the head,
 * stores the rows at it, and writes the source's marker in its own transaction. What replication
 * carries is read from a test_decoding slot of the test's database.
 */
@ExtendWith(VertxExtension.class)
class PgOneRoundTripTest {

  private static final FullUserId ALICE = FullUserId.of("alice", "phone");

  private Pool pool;
  private PgCheckpointStorage storage;
  private HeadStoringWriter writer;
  private String slot;

  @BeforeEach
  void open(Vertx vertx, VertxTestContext test) {
    pool = PgBuilder.pool().connectingTo(PgConnectOptions.fromUri(TestDatabase.freshDatabase())).using(vertx).build();
    storage = new PgCheckpointStorage(pool);
    writer = storage.atCurrentHeadMarkedWithin(PgReplicationSource.MARKER_IN_TRANSACTION);
    slot = "one_statement_" + System.nanoTime();
    PgMigrations.migrate(pool)
        .compose(v -> pool.preparedQuery("SELECT pg_create_logical_replication_slot($1, 'test_decoding')").execute(Tuple.of(slot)))
        .onComplete(test.succeedingThenComplete());
  }

  @AfterEach
  void close(VertxTestContext test) {
    // A slot holds back WAL for the whole server: never leave one behind.
    pool.preparedQuery("SELECT pg_drop_replication_slot($1)").execute(Tuple.of(slot))
        .eventually(() -> pool.close())
        .onComplete(test.succeedingThenComplete());
  }

  @Test
  void aBatchIsStoredAtTheHeadItReads(VertxTestContext test) {
    currentLsn().compose(before -> writer.storeAtCurrentHead(List.of(CheckpointWrite.generated(ALICE)))
            .compose(batch -> currentLsn().map(after -> {
              test.verify(() -> {
                assertTrue(batch.head().matches("[0-9A-F]{8}/[0-9A-F]{8}"), batch.head());
                assertTrue(batch.head().compareTo(before) >= 0 && batch.head().compareTo(after) <= 0,
                    before + " <= " + batch.head() + " <= " + after);
                assertEquals(new WriteOutcome.Stored(1, 1, true, batch.head()), batch.stored().outcomes().get(ALICE));
              });
              return null;
            })))
        .onComplete(test.succeedingThenComplete());
  }

  @Test
  void aBatchCommitsItsMarkerWithItsRows(VertxTestContext test) {
    commitsItsMarkerWithItsRows(writer, test);
  }

  /** The older statement of tables without the unique key writes its marker the same way. */
  @Test
  void aBatchOnATableWithoutTheKeyCommitsItsMarkerWithItsRows(VertxTestContext test) {
    commitsItsMarkerWithItsRows(PgCheckpointStorage.withoutUpsert(pool).atCurrentHeadMarkedWithin(PgReplicationSource.MARKER_IN_TRANSACTION),
        test);
  }

  @Test
  void aBatchWithNothingPendingAfterItWritesNoMarker(VertxTestContext test) {
    writer.storeAtCurrentHead(List.of(CheckpointWrite.requested(ALICE, 5)))
        .compose(first -> storage.markProcessed(first.head()))
        .compose(marked -> decoded())
        .compose(skipped -> writer.storeAtCurrentHead(List.of(CheckpointWrite.requested(ALICE, 3))))
        .compose(stale -> decoded().map(changes -> {
          test.verify(() -> {
            assertEquals(new WriteOutcome.Stored(5, 0, false), stale.stored().outcomes().get(ALICE));
            assertNull(stale.marker());
            assertEquals(List.of(), changes, "neither rows nor a marker");
          });
          return null;
        }))
        .onComplete(test.succeedingThenComplete());
  }

  @Test
  void aBatchAfterACrashEmptiedThePendingQueueWritesAMarkerSoThatTheQueueIsRebuilt(VertxTestContext test) {
    writer.storeAtCurrentHead(List.of(CheckpointWrite.requested(ALICE, 5)))
        .compose(first -> storage.markProcessed(first.head()))
        .compose(marked -> decoded())
        // What crash recovery does to an unlogged table: rows pending then are in no queue.
        .compose(skipped -> pool.query("TRUNCATE ackpoint_pending").execute())
        .compose(emptied -> writer.storeAtCurrentHead(List.of(CheckpointWrite.requested(ALICE, 3))))
        .compose(stale -> decoded().map(changes -> {
          test.verify(() -> {
            assertEquals(new WriteOutcome.Stored(5, 0, false), stale.stored().outcomes().get(ALICE));
            // (After the TRUNCATE's own empty transaction: an unlogged table's changes are not decoded.)
            assertEquals(List.of("BEGIN", "message: transactional: 1 prefix: ackpoint", "COMMIT"),
                changes.subList(changes.size() - 3, changes.size()), changes.toString());
          });
          return null;
        }))
        .onComplete(test.succeedingThenComplete());
  }

  /** A user asking for a generated and a supplied id at once is stored in two turns, each with its marker. */
  @Test
  void aWriteBothGeneratedAndSuppliedIsStoredInTwoTurnsEachCommittingAMarker(VertxTestContext test) {
    writer.storeAtCurrentHead(List.of(new CheckpointWrite(ALICE, true, 5L)))
        .compose(batch -> decoded().map(changes -> {
          test.verify(() -> {
            assertEquals(new WriteOutcome.Stored(5, 1, true, batch.head()), batch.stored().outcomes().get(ALICE));
            assertEquals(List.of("BEGIN", "table public.ackpoint_write_checkpoints: INSERT",
                "message: transactional: 1 prefix: ackpoint", "COMMIT",
                "BEGIN", "table public.ackpoint_write_checkpoints: UPDATE",
                "message: transactional: 1 prefix: ackpoint", "COMMIT"), changes);
          });
          return null;
        }))
        .onComplete(test.succeedingThenComplete());
  }

  @Test
  void theHeadIsTheSourcesPositionFormat(VertxTestContext test) {
    Future<HeadedBatch> stored = writer.storeAtCurrentHead(List.of(CheckpointWrite.generated(ALICE)));
    stored.compose(batch -> pool.query("SELECT lsns->>'1' FROM ackpoint_write_checkpoints").execute().map(rows -> {
      test.verify(() -> {
        String head = rows.iterator().next().getString(0);
        assertEquals(batch.head(), head);
        assertEquals(Lsn.normalize(head), head, "padded as Lsn pads, so that heads compare as text");
      });
      return null;
    })).onComplete(test.succeedingThenComplete());
  }

  private void commitsItsMarkerWithItsRows(HeadStoringWriter writer, VertxTestContext test) {
    writer.storeAtCurrentHead(List.of(CheckpointWrite.generated(ALICE)))
        .compose(batch -> decoded().map(changes -> {
          test.verify(() -> {
            assertEquals(new WriteOutcome.Stored(1, 1, true, batch.head()), batch.stored().outcomes().get(ALICE));
            assertEquals(List.of("BEGIN", "table public.ackpoint_write_checkpoints: INSERT",
                "message: transactional: 1 prefix: ackpoint", "COMMIT"), changes);
            assertEquals(Lsn.normalize(batch.marker()), batch.marker(), "padded as the follower pads positions");
            assertTrue(batch.marker().compareTo(batch.head()) > 0, batch.head() + " < " + batch.marker());
          });
          return null;
        }))
        .onComplete(test.succeedingThenComplete());
  }

  private Future<String> currentLsn() {
    return pool.query("SELECT pg_current_wal_lsn()::text").execute().map(rows -> Lsn.format(rows.iterator().next().getString(0)));
  }

  /** What replication carried since the last call, each change without its details. */
  private Future<List<String>> decoded() {
    return pool.preparedQuery("SELECT data FROM pg_logical_slot_get_changes($1, NULL, NULL, 'include-xids', '0')")
        .execute(Tuple.of(slot)).map(rows -> {
          List<String> changes = new ArrayList<>();
          for (Row row : rows) {
            String data = row.getString(0);
            int detail = data.indexOf(": ", data.startsWith("table ") ? "table ".length() : 0);
            int second = detail < 0 ? -1 : data.indexOf(':', detail + 2);
            changes.add(data.startsWith("table ") && second > 0 ? data.substring(0, second)
                : data.startsWith("message:") ? data.substring(0, data.indexOf(" content:")).replaceAll(", sz: \\d+", "")
                : data);
          }
          return changes;
        });
  }
}
