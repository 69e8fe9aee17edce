package io.ackpoint.ack;

import io.ackpoint.Ackpoint;
import io.ackpoint.AckpointAddresses;
import io.ackpoint.AckpointOptions;
import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.PositionReached;
import io.ackpoint.core.Reached;
import io.ackpoint.source.Lsn;
import io.ackpoint.storage.PgAcknowledgementHistory;
import io.ackpoint.storage.PgCheckpointStorage;
import io.ackpoint.storage.PgMigrations;
import io.ackpoint.support.Await;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node that learns that the engine before the current one may have applied positions it never
 * announced (it died) reads them back from storage and tells its consumers; each at a checkpoint
 * sequence no lower than the position's own, as the engine would have numbered it: a client is
 * never told "acknowledged at S" with S before its write's head.
 */
@ExtendWith(VertxExtension.class)
class ReadBackTest {

  private static final String HEARD = "00000000/00000100";
  private static final String UNANNOUNCED = "00000000/10000000";
  /** Where the new engine starts: before what the old one applied unannounced (its slot's confirmation lagged). */
  private static final String NEW_ENGINE = "00000000/08000000";
  private static final String NEXT = "00000000/20000000";

  @Test
  void anAcknowledgementReadBackIsToldAtASequenceNoLowerThanItsPosition(Vertx vertx, VertxTestContext test) {
    String uri = TestDatabase.freshDatabase();
    JsonObject config = TestAckpoint.configJson(uri);
    config.getJsonObject("http").put("enabled", false);
    Ackpoint ackpoint = Await.result(Ackpoint.deploy(vertx, new AckpointOptions(config)));
    AckpointAddresses addresses = new AckpointAddresses(AckpointAddresses.DEFAULT_PREFIX);
    try (Sql sql = new Sql(vertx, uri)) {
      // What the engine that died had applied at a position it never announced.
      sql.query("INSERT INTO ackpoint_write_checkpoints (user_id, client_id, write_checkpoint, lsns, processed_at_lsn)"
          + " VALUES ('u', 'c', 3, $1, $2)", new JsonObject().put("1", "00000000/0F000000"), UNANNOUNCED);
    }
    vertx.eventBus().<JsonObject>consumer(addresses.checkpointReached(), msg -> test.verify(() -> {
      assertEquals("3", msg.body().getString("write_checkpoint"));
      assertEquals(UNANNOUNCED, msg.body().getString("position"));
      long checkpoint = Long.parseLong(msg.body().getString("checkpoint"));
      assertTrue(checkpoint >= Lsn.FORMAT.ordinal(UNANNOUNCED), checkpoint + " is below the position's own sequence");
      ackpoint.close().onComplete(test.succeedingThenComplete());
    }));
    vertx.eventBus().publish(addresses.positionReached(), new PositionReached(HEARD, Lsn.FORMAT.ordinal(HEARD), List.of(), "00000000/00000001"));
    // A new engine's first announcement names no previous one: the node reads back what it missed.
    vertx.eventBus().publish(addresses.positionReached(), new PositionReached(NEW_ENGINE, Lsn.FORMAT.ordinal(NEW_ENGINE), List.of(), ""));
  }

  /**
   * A node started, its streams read storage, and before it heard any announcement the engine's node
   * died between marking a checkpoint and announcing it. The new engine's first announcement has
   * the node read back what was processed since it started, and only that.
   */
  @Test
  @Timeout(value = 10, timeUnit = TimeUnit.SECONDS)
  void aNodeThatHasHeardNothingYetReadsBackWhatWasProcessedSinceItStarted(Vertx vertx, VertxTestContext test) {
    Pool pool = new Sql(vertx, TestDatabase.freshDatabase()).pool();
    Await.result(PgMigrations.migrate(pool));
    PgCheckpointStorage storage = new PgCheckpointStorage(pool);
    PgAcknowledgementHistory history = new PgAcknowledgementHistory(pool);
    FullUserId before = FullUserId.of("before", "c");
    FullUserId unannounced = FullUserId.of("unannounced", "c");
    Await.result(storage.store(HEARD, List.of(new CheckpointWrite(before, true, null))));
    Await.result(storage.markProcessed(HEARD));
    MissedAnnouncements missed = new MissedAnnouncements(vertx, history, (position, users) -> test.verify(() -> {
      assertEquals(UNANNOUNCED, position);
      assertEquals(List.of(new Reached(unannounced, 1)), users);
      test.completeNow();
    }));
    missed.startFrom(Await.result(history.latestProcessed()));
    Await.result(storage.store(NEW_ENGINE, List.of(new CheckpointWrite(unannounced, true, null))));
    Await.result(storage.markProcessed(UNANNOUNCED));
    vertx.runOnContext(heard -> missed.heard(new PositionReached(NEXT, Lsn.FORMAT.ordinal(NEXT), List.of(), "")));
  }
}
