package io.ackpoint.source;

import io.ackpoint.config.AckpointConfig;
import io.ackpoint.core.CustomCheckpoint;
import io.ackpoint.core.FullUserId;
import io.ackpoint.support.Await;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.sql.SQLException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The stream on a real slot: custom checkpoints are handed out one committed transaction at a time,
 * nothing after them is read (so nothing after them is confirmed, not even by the idle
 * confirmation) until their position is confirmed, and a transaction whose position was never
 * confirmed is sent again on the next connection.
 */
@ExtendWith(VertxExtension.class)
class PgLogicalStreamTest {

  private String db;
  private Sql sql;
  private AckpointConfig config;

  @BeforeEach
  void setUp(Vertx vertx) {
    db = TestDatabase.freshDatabase();
    sql = new Sql(vertx, db);
    sql.query("CREATE TABLE checkpoints (id BIGSERIAL PRIMARY KEY, user_id TEXT NOT NULL, checkpoint BIGINT NOT NULL,"
        + " client_id TEXT)");
    config = TestAckpoint.config(TestAckpoint.withFollower(TestAckpoint.configJson(db))
        .put("checkpoints", new JsonObject().put("mode", "custom")));
  }

  @AfterEach
  void tearDown() {
    sql.query("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1",
        config.replication().slotName());
    sql.close();
  }

  private PgLogicalStream open() throws SQLException {
    return PgLogicalStream.open(db, config.replication(), config.checkpoints().custom());
  }

  private static PgLogicalStream.Observed nextCustom(PgLogicalStream stream) throws SQLException {
    PgLogicalStream.Observed observed;
    while ((observed = stream.next()).custom().isEmpty()) {
      stream.confirm(observed.position());
    }
    return observed;
  }

  /**
   * A walsender decoding a large transaction (here the changes of a table it does not publish, read
   * and left out) sends nothing while it does, for longer than the stream's silence limit: the
   * stream asks it for a reply, and is not taken for dead while it gets keepalives.
   */
  @Test
  void aStreamIsNotPresumedDeadWhileTheServerDecodesALargeTransaction() throws SQLException {
    sql.query("CREATE TABLE filler (n INT)");
    sql.query("DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET wal_sender_timeout = ''2s''', current_database()); END $$");
    AckpointConfig quickStatus = TestAckpoint.config(TestAckpoint.configJson(db)
        .put("replication", new JsonObject().put("follower", true).put("slot_name", config.replication().slotName())
            .put("heartbeat_interval", "5s").put("status_interval", "400ms"))
        .put("checkpoints", new JsonObject().put("mode", "custom")));
    try (PgLogicalStream stream = PgLogicalStream.open(db, quickStatus.replication(), quickStatus.checkpoints().custom(),
        Duration.ofSeconds(4))) {
      // Written while the stream is read: a stream left unread sends no status update, and the
      // server (2 s) would end it before the decoding this test is about.
      Future<?> written = sql.pool().query("INSERT INTO filler SELECT generate_series(1, 2500000)").execute()
          .compose(filled -> sql.pool().query("INSERT INTO checkpoints (user_id, checkpoint, client_id) VALUES ('u', 9, 'c1')")
              .execute());
      assertEquals(9, nextCustom(stream).custom().get(0).checkpoint());
      Await.result(written);
    }
  }

  @Test
  void anIdleStreamSleepsOnItsSocketAndWakesForTheNextMessage() throws SQLException {
    try (PgLogicalStream stream = open()) {
      assertTrue(stream.waitsOnSocket(), "this PgJDBC's connection stream is reachable: no polling");
      assertTrue(stream.updatesQuietly(), "this PgJDBC's quiet status update is reachable: no answer asked for");
      sql.query("INSERT INTO checkpoints (user_id, checkpoint, client_id) VALUES ('u', 7, 'c1')");
      assertEquals(7, nextCustom(stream).custom().get(0).checkpoint());
    }
  }

  /**
   * An idle stream sleeps on its socket between status updates and sends each when due, so the
   * server keeps hearing from it (and can recycle WAL) however long nothing comes. The server only
   * shows the time of the last reply, so the test watches it change.
   */
  @Test
  void anIdleStreamSendsItsStatusUpdateEveryStatusInterval() throws Exception {
    AckpointConfig quickStatus = TestAckpoint.config(TestAckpoint.configJson(db)
        .put("replication", new JsonObject().put("follower", true).put("slot_name", config.replication().slotName())
            .put("status_interval", "300ms"))
        .put("checkpoints", new JsonObject().put("mode", "custom")));
    try (PgLogicalStream stream = PgLogicalStream.open(db, quickStatus.replication(), quickStatus.checkpoints().custom())) {
      CompletableFuture<Void> reading = CompletableFuture.runAsync(() -> {
        try {
          while (stream.next() != null) {
            // nothing is written: the server sends keepalives at most, confirmed by the idle confirmation
          }
        } catch (SQLException e) {
          if (!stream.aborted()) {
            throw new IllegalStateException(e);
          }
        }
      });
      Set<String> replies = new HashSet<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      long firstSeen = 0;
      while (replies.size() < 4 && System.nanoTime() < deadline && !reading.isDone()) {
        RowSet<Row> rows = sql.query("SELECT r.reply_time::text FROM pg_stat_replication r"
            + " JOIN pg_replication_slots s ON s.active_pid = r.pid WHERE s.slot_name = $1", quickStatus.replication().slotName());
        for (Row row : rows) {
          if (row.getString(0) != null && replies.add(row.getString(0)) && replies.size() == 1) {
            firstSeen = System.nanoTime();
          }
        }
        Thread.sleep(50);
      }
      double seconds = (System.nanoTime() - firstSeen) / 1e9;
      stream.abort();
      reading.get(10, TimeUnit.SECONDS);
      assertTrue(replies.size() >= 4, "status updates seen from an idle stream within 10 s: " + replies);
      // Not a loop that sends all the time either: one update per 300 ms, and one for the keepalive at the start.
      assertTrue(replies.size() <= seconds / 0.3 + 3, replies.size() + " updates in " + seconds + " s: " + replies);
    }
  }

  @Test
  void customCheckpointsMustBeConfirmedBeforeTheStreamReadsOnAndAreSentAgainUntilThen() throws SQLException {
    PgLogicalStream.Observed first;
    try (PgLogicalStream stream = open()) {
      sql.query("INSERT INTO checkpoints (user_id, checkpoint, client_id) VALUES ('u', 41, 'c1')");
      first = nextCustom(stream);
      assertEquals(41, first.custom().get(0).checkpoint());
      // A marker after the transaction: reading it (and confirming idly past the rows) is refused.
      sql.query("SELECT pg_logical_emit_message(false, 'ackpoint', 'ping')");
      assertThrows(IllegalStateException.class, stream::next);
    }

    try (PgLogicalStream stream = open()) {
      PgLogicalStream.Observed again = nextCustom(stream);
      assertEquals(first, again, "never confirmed, so the slot sends the transaction again");
      stream.confirm(again.position());
      sql.query("INSERT INTO checkpoints (user_id, checkpoint, client_id) VALUES ('u', 42, 'c1')");
      assertEquals(42, nextCustom(stream).custom().get(0).checkpoint(), "confirmed, so the stream reads on");
    }
  }

  @Test
  void aCheckpointWithASignOrAnotherScriptsDigitsIsSkipped() throws SQLException {
    sql.query("ALTER TABLE checkpoints ALTER COLUMN checkpoint TYPE TEXT");
    try (PgLogicalStream stream = open()) {
      sql.query("INSERT INTO checkpoints (user_id, checkpoint, client_id) VALUES ('a', '+7', 'c1'), ('b', '٣', 'c1'), ('c', '8', 'c1')");
      List<CustomCheckpoint> custom = nextCustom(stream).custom();
      assertEquals(List.of(new CustomCheckpoint(new FullUserId("c", "c1"), 8, false)), custom);
    }
  }
}
