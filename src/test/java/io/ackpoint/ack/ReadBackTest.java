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
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

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
    MissedAnnouncements missed = new MissedAnnouncements(vertx, history, readBack -> test.verify(() -> {
      String position = readBack.position();
      List<Reached> users = readBack.users();
      // The position it counts from is read again (its lower bound is inclusive), nothing before it.
      assertTrue(position.compareTo(HEARD) >= 0, position + " was processed before the node started");
      if (position.equals(UNANNOUNCED)) {
        assertEquals(List.of(new Reached(unannounced, 1)), users);
        test.completeNow();
      }
    }));
    missed.startFrom(Await.result(history.latestProcessed()));
    Await.result(storage.store(NEW_ENGINE, List.of(new CheckpointWrite(unannounced, true, null))));
    Await.result(storage.markProcessed(UNANNOUNCED));
    vertx.runOnContext(heard -> missed.heard(announcement(NEXT, ""), new AnnouncingEngine("new", NEXT)));
  }

  private static final String OLD_PREVIOUS = "00000000/0F000000";
  private static final String OLD = "00000000/10000000";
  private static final String NEW_1 = "00000000/08000000";
  private static final String NEW_2 = "00000000/09000000";
  private static final String NEW_3 = "00000000/0A000000";
  private static final AnnouncingEngine OLD_ENGINE = new AnnouncingEngine("old", OLD_PREVIOUS);
  /** After a failover: it starts from the slot's confirmed position, which lags what the old engine announced. */
  private static final AnnouncingEngine NEW_ENGINE_AFTER_FAILOVER = new AnnouncingEngine("new", NEW_1);

  /**
   * The node missed the new engine's first announcements (its cluster connection dropped): the next
   * names one it never heard, at a position below the old engine's latest. Compared with the latest
   * position heard from any engine, no gap was seen.
   */
  @Test
  @Timeout(value = 10, timeUnit = TimeUnit.SECONDS)
  void aMissedAnnouncementOfANewEngineBelowWhatTheOldOneAnnouncedIsReadBack(Vertx vertx, VertxTestContext test) {
    Node node = new Node(vertx);
    node.markedAt(NEW_2, "u");
    vertx.runOnContext(v -> {
      node.missed.startFrom(OLD_PREVIOUS);
      node.missed.heard(announcement(OLD, OLD_PREVIOUS), OLD_ENGINE);
      node.missed.heard(announcement(NEW_3, NEW_2), NEW_ENGINE_AFTER_FAILOVER);
    });
    node.expectReadBack(NEW_2, "u", test);
  }

  /**
   * A statement of the new engine commits, its answer lost: its next announcement names none, and the
   * node reads back from the last position it heard from that engine, below the old engine's latest.
   */
  @Test
  @Timeout(value = 10, timeUnit = TimeUnit.SECONDS)
  void aLostAnswerOfANewEnginesStatementBelowWhatTheOldOneAnnouncedIsReadBack(Vertx vertx, VertxTestContext test) {
    Node node = markedUnannouncedAfterFailover(vertx);
    vertx.runOnContext(v -> node.missed.heard(announcement(NEW_3, ""), NEW_ENGINE_AFTER_FAILOVER));
    node.expectReadBack(NEW_2, "u", test);
  }

  /**
   * At a clean stop the engine applies its latest position again, to record what it released since
   * its last statement began; that statement commits at the very position every node last heard,
   * its answer lost (the stop's bound passed): the next engine's first announcement has every node
   * read back that position too.
   */
  @Test
  @Timeout(value = 10, timeUnit = TimeUnit.SECONDS)
  void whatAStopsLastStatementRecordedAtTheLatestPositionHeardIsReadBack(Vertx vertx, VertxTestContext test) {
    Node node = new Node(vertx);
    node.markedAt(OLD_PREVIOUS, "first");
    vertx.runOnContext(v -> {
      node.missed.startFrom("");
      node.missed.heard(announcement(OLD_PREVIOUS, ""), OLD_ENGINE);
    });
    Await.result(node.readBack(OLD_PREVIOUS));
    vertx.runOnContext(v -> node.missed.heard(announcement(OLD, OLD_PREVIOUS), OLD_ENGINE));
    node.markedAt(OLD, "u");
    String next = "00000000/11000000";
    vertx.runOnContext(v -> node.missed.heard(announcement(next, ""), new AnnouncingEngine("next", next)));
    node.expectReadBack(OLD, "u", test);
  }

  /**
   * The engine that took over below what the old one announced marks a checkpoint and dies before
   * announcing it; the next engine starts above that position (the follower confirms a position as it
   * hands it over), yet below what the first engine announced: the node reads back from the last
   * position announced before the new engine, not from the latest it heard.
   */
  @Test
  @Timeout(value = 10, timeUnit = TimeUnit.SECONDS)
  void whatAnEngineBelowTheOneBeforeItMarkedUnannouncedIsReadBack(Vertx vertx, VertxTestContext test) {
    Node node = markedUnannouncedAfterFailover(vertx);
    vertx.runOnContext(v -> node.missed.heard(announcement(NEW_3, ""), new AnnouncingEngine("third", NEW_3)));
    node.expectReadBack(NEW_2, "u", test);
  }

  /**
   * A node that heard the old engine, then the first announcement of the engine that took over below
   * it (that read awaited: it must not be what finds the next mark); that engine then marks a
   * checkpoint of u at {@link #NEW_2} and the node hears nothing of it.
   */
  private static Node markedUnannouncedAfterFailover(Vertx vertx) {
    Node node = new Node(vertx);
    node.markedAt(NEW_1, "first");
    vertx.runOnContext(v -> {
      node.missed.startFrom(OLD_PREVIOUS);
      node.missed.heard(announcement(OLD, OLD_PREVIOUS), OLD_ENGINE);
      node.missed.heard(announcement(NEW_1, ""), NEW_ENGINE_AFTER_FAILOVER);
    });
    Await.result(node.readBack(NEW_1));
    node.markedAt(NEW_2, "u");
    return node;
  }

  /**
   * An engine's first announcement has the node read back everything since it started, that
   * announcement's position included: its consumers hear each user at a position once, so what the
   * announcement carried is not told them again, and what storage holds beside it (a statement that
   * applied the position again, its answer lost) is.
   */
  @Test
  @Timeout(value = 10, timeUnit = TimeUnit.SECONDS)
  void aReadBackTellsConsumersOnlyWhatNoAnnouncementCarriedAndStreamsEverything(Vertx vertx, VertxTestContext test) {
    Node node = new Node(vertx);
    node.markedAt(OLD, "announced");
    node.markedAt(OLD, "unannounced");
    PositionReached announced = new PositionReached(OLD, Lsn.FORMAT.ordinal(OLD),
        List.of(new Reached(FullUserId.of("announced", "c"), 1)), "");
    vertx.runOnContext(v -> {
      node.missed.startFrom("");
      node.missed.heard(announced, OLD_ENGINE);
    });
    node.readBack(OLD).onComplete(test.succeeding(readBack -> test.verify(() -> {
      Reached unannounced = new Reached(FullUserId.of("unannounced", "c"), 1);
      assertEquals(List.of(unannounced), readBack.notTold());
      // Streams hear both: they keep the greatest id, and the announcement may not have reached them.
      assertEquals(2, readBack.users().size(), readBack.users().toString());
      test.completeNow();
    })));
  }

  /** Two reads that overlap (a first announcement, then a lost answer's): what the first told, the second does not tell consumers again. */
  @Test
  @Timeout(value = 10, timeUnit = TimeUnit.SECONDS)
  void whatOneReadBackToldConsumersAnOverlappingOneDoesNotTellAgain(Vertx vertx, VertxTestContext test) {
    List<MissedAnnouncements.ReadBack> atOld = new ArrayList<>();
    Node node = new Node(vertx, readBack -> {
      if (readBack.position().equals(OLD)) {
        atOld.add(readBack);
      }
      if (atOld.size() == 2) {
        test.verify(() -> {
          assertEquals(List.of(new Reached(FullUserId.of("u", "c"), 1)), atOld.get(0).notTold());
          assertEquals(List.of(), atOld.get(1).notTold());
          assertEquals(atOld.get(0).users(), atOld.get(1).users(), "streams hear it from every read");
        });
        test.completeNow();
      }
    });
    node.markedAt(OLD, "u");
    vertx.runOnContext(v -> {
      node.missed.startFrom("");
      node.missed.heard(announcement(OLD, ""), OLD_ENGINE);
      node.missed.heard(announcement("00000000/11000000", ""), OLD_ENGINE);
    });
  }

  private static PositionReached announcement(String position, String previous) {
    return new PositionReached(position, Lsn.FORMAT.ordinal(position), List.of(), previous);
  }

  /** A node's read-back on its own storage: what it reads back, by position, as it is read. */
  private static final class Node {

    final PgCheckpointStorage storage;
    final MissedAnnouncements missed;
    private final Map<String, Promise<MissedAnnouncements.ReadBack>> read = new ConcurrentHashMap<>();

    Node(Vertx vertx) {
      this(vertx, readBack -> { });
    }

    /** {@code listener}: told of every read back, as it is read. */
    Node(Vertx vertx, Consumer<MissedAnnouncements.ReadBack> listener) {
      Pool pool = new Sql(vertx, TestDatabase.freshDatabase()).pool();
      Await.result(PgMigrations.migrate(pool));
      storage = new PgCheckpointStorage(pool);
      missed = new MissedAnnouncements(vertx, new PgAcknowledgementHistory(pool), readBack -> {
        promise(readBack.position()).tryComplete(readBack);
        listener.accept(readBack);
      });
    }

    /** An engine's statement at {@code position} marks a checkpoint of {@code user} (stored at that head). */
    void markedAt(String position, String user) {
      Await.result(storage.store(position, List.of(new CheckpointWrite(FullUserId.of(user, "c"), true, null))));
      Await.result(storage.markProcessed(position));
    }

    /** Completes {@code test} once {@code user}'s first checkpoint is read back at {@code position}. */
    void expectReadBack(String position, String user, VertxTestContext test) {
      readBack(position).onComplete(test.succeeding(readBack -> test.verify(() -> {
        assertEquals(List.of(new Reached(FullUserId.of(user, "c"), 1)), readBack.users());
        test.completeNow();
      })));
    }

    /** Completes with what is read back at {@code position}, the first time it is read back. */
    Future<MissedAnnouncements.ReadBack> readBack(String position) {
      return promise(position).future();
    }

    private Promise<MissedAnnouncements.ReadBack> promise(String position) {
      return read.computeIfAbsent(position, p -> Promise.promise());
    }
  }
}
