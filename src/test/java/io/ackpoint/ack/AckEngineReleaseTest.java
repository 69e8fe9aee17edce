package io.ackpoint.ack;

import io.ackpoint.core.FullUserId;
import io.ackpoint.core.PendingCheckpoints;
import io.ackpoint.core.PendingCheckpoints.Pending;
import io.ackpoint.core.PositionReached;
import io.ackpoint.core.PositionReachedCodec;
import io.ackpoint.core.Reached;
import io.ackpoint.source.Lsn;
import io.ackpoint.storage.CheckpointStorage;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The engine releases a batch's pending checkpoints when a position passes their heads, whether the
 * position comes after the batch's answer or before it, and never at a position before the head.
 * Its statements never finish here: what is released does not wait for them.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 10, timeUnit = TimeUnit.SECONDS)
class AckEngineReleaseTest {

  private static final String BEFORE = "00000000/00000050";
  private static final String HEAD = "00000000/00000100";
  private static final String AFTER = "00000000/00000150";
  private static final FullUserId USER = FullUserId.of("u", "c");

  private static final String LATER = "00000000/00000200";

  private AckEngine engine;

  @BeforeEach
  void engine(Vertx vertx) {
    PositionReachedCodec.registerOn(vertx);
    engine = new AckEngine(vertx, storage((position, marked) -> { }), Lsn.FORMAT, "reached", "heard", AckListener.NONE);
  }

  /** Storage whose acknowledgement statements end when {@code statements} completes them (never, unless it does). */
  private static CheckpointStorage storage(BiConsumer<String, Promise<List<Reached>>> statements) {
    return (CheckpointStorage) Proxy.newProxyInstance(CheckpointStorage.class.getClassLoader(),
        new Class<?>[] {CheckpointStorage.class}, (proxy, method, args) -> {
          Promise<List<Reached>> statement = Promise.promise();
          if (method.getName().equals("markProcessed")) {
            statements.accept((String) args[0], statement);
          }
          return statement.future();
        });
  }

  /**
   * An engine whose statements end at once, acknowledging nobody; their positions go to {@code
   * statements}. A release waits {@code recordMs} for a position before it starts its own statement.
   */
  private static AckEngine recordingNobody(Vertx vertx, List<String> statements, long recordMs) {
    return recordingNobody(vertx, statements, recordMs, AckEngine.SPACING_MS);
  }

  /** {@link #recordingNobody}, its statements started {@code spacingMs} apart at least. */
  static AckEngine recordingNobody(Vertx vertx, List<String> statements, long recordMs, long spacingMs) {
    return new AckEngine(vertx, storage((position, statement) -> {
      statements.add(position);
      statement.complete(List.of());
    }), Lsn.FORMAT, "reached", "heard", AckListener.NONE, recordMs, spacingMs);
  }

  private static PendingCheckpoints storedNow(Pending... pending) {
    return new PendingCheckpoints(List.of(pending), System.nanoTime());
  }

  @Test
  void aCheckpointIsReleasedByThePositionThatPassesItsHead(Vertx vertx, VertxTestContext test) {
    vertx.eventBus().<PositionReached>consumer("reached", msg -> test.verify(() -> {
      assertTrue(msg.headers().contains(PositionReached.RELEASE_HEADER));
      assertEquals(AFTER, msg.body().position(), "not " + BEFORE + ", before the head");
      assertEquals(List.of(new Reached(USER, 7)), msg.body().reached());
      assertEquals(Lsn.FORMAT.ordinal(AFTER), msg.body().checkpoint());
      test.completeNow();
    }));
    vertx.runOnContext(v -> {
      engine.pending(storedNow(new Pending(USER, 7, HEAD)));
      engine.observe(BEFORE);
      engine.observe(AFTER);
    });
  }

  @Test
  void aCheckpointWhoseHeadWasPassedBeforeItsBatchAnsweredIsReleasedAtOnce(Vertx vertx, VertxTestContext test) {
    vertx.eventBus().<PositionReached>consumer("reached", msg -> test.verify(() -> {
      assertEquals(AFTER, msg.body().position());
      assertEquals(List.of(new Reached(USER, 7)), msg.body().reached());
      test.completeNow();
    }));
    vertx.runOnContext(v -> {
      engine.observe(AFTER);
      engine.pending(storedNow(new Pending(USER, 6, BEFORE), new Pending(USER, 7, HEAD)));
    });
  }

  /**
   * The batch's answer reached the engine after a statement begun later than that answer announced
   * its checkpoint: released now, it would come after the announcement, and every node would keep
   * it as not yet recorded.
   */
  @Test
  void aCheckpointAnnouncedBeforeItsBatchsAnswerArrivedIsNotReleased(Vertx vertx, VertxTestContext test) {
    AckEngine recording = new AckEngine(vertx, storage((position, statement) -> statement.complete(
        position.equals(AFTER) ? List.of(new Reached(USER, 7)) : List.of())), Lsn.FORMAT, "reached", "heard", AckListener.NONE);
    List<String> heard = new ArrayList<>();
    vertx.runOnContext(v -> {
      PendingCheckpoints answered = storedNow(new Pending(USER, 7, HEAD));
      vertx.eventBus().<PositionReached>consumer("reached", msg -> {
        heard.add((msg.headers().contains(PositionReached.RELEASE_HEADER) ? "released " : "recorded ") + msg.body().position());
        if (msg.body().position().equals(AFTER)) {
          recording.pending(answered);
          recording.observe(LATER);
        } else if (msg.body().position().equals(LATER)) {
          test.verify(() -> assertEquals(List.of("recorded " + AFTER, "recorded " + LATER), heard));
          test.completeNow();
        }
      }).completion().onSuccess(registered -> recording.observe(AFTER));
    });
  }

  /**
   * A clean stop waits for the statement running and for the one of a position observed before it
   * ended: users released to streams are recorded before the storage closes. Nothing is released
   * once the stop began (no statement would record it).
   */
  @Test
  void aStopWaitsForTheStatementsThatRecordWhatWasReleased(Vertx vertx, VertxTestContext test) {
    Map<String, Promise<List<Reached>>> statements = new LinkedHashMap<>();
    AckEngine stopping = new AckEngine(vertx, storage(statements::put), Lsn.FORMAT, "reached", "heard", AckListener.NONE);
    List<String> released = new ArrayList<>();
    vertx.eventBus().<PositionReached>consumer("reached", msg -> {
      if (msg.headers().contains(PositionReached.RELEASE_HEADER)) {
        released.add(msg.body().position());
      }
    });
    vertx.runOnContext(v -> {
      stopping.observe(AFTER);
      Future<Void> stopped = stopping.stop();
      stopping.pending(storedNow(new Pending(USER, 7, HEAD)));
      stopping.observe(LATER);
      test.verify(() -> {
        assertEquals(List.of(AFTER), List.copyOf(statements.keySet()));
        assertFalse(stopped.isComplete(), "a statement runs");
      });
      statements.get(AFTER).complete(List.of());
      vertx.runOnContext(next -> {
        test.verify(() -> {
          assertEquals(List.of(AFTER, LATER), List.copyOf(statements.keySet()), "the position observed meanwhile is applied");
          assertFalse(stopped.isComplete());
        });
        statements.get(LATER).complete(List.of());
        stopped.onComplete(test.succeeding(done -> test.verify(() -> {
          assertEquals(List.of(), released, "nothing released after the stop began");
          test.completeNow();
        })));
      });
    });
  }

  /**
   * A batch whose answer reaches the engine after the statement for the latest position began is
   * released at that position, and names the next statement to record it; that statement's
   * announcement names itself.
   */
  @Test
  void aReleaseAfterTheLastStatementNamesTheNextOneWhichRecordsIt(Vertx vertx, VertxTestContext test) {
    List<String> statements = new ArrayList<>();
    AckEngine recording = recordingNobody(vertx, statements, TimeUnit.HOURS.toMillis(1));
    releasedAfterTheLastStatement(vertx, recording, heard -> {
      if (heard.size() == 2) {
        recording.observe(LATER);
      } else {
        test.verify(() -> {
          assertEquals(List.of("recorded by 1", "released by 2", "recorded by 2"), heard);
          assertEquals(List.of(AFTER, LATER), statements);
        });
        test.completeNow();
      }
    }, 2);
  }

  /**
   * No position may come after a release (an idle database, whose next position is the follower's
   * heartbeat), and the statement of the position that passed the release's head may have missed its
   * rows (a marker committed with them reaches the follower a moment before they are visible):
   * without a position, the release starts the statement that records it, at the latest position.
   */
  @Test
  void aReleaseWithNoPositionAfterItIsRecordedByAStatementOfItsOwn(Vertx vertx, VertxTestContext test) {
    List<String> statements = new ArrayList<>();
    AckEngine recording = recordingNobody(vertx, statements, 1);
    releasedAfterTheLastStatement(vertx, recording, heard -> test.verify(() -> {
      assertEquals(List.of("recorded by 1", "released by 2", "recorded by 2"), heard);
      assertEquals(List.of(AFTER, AFTER), statements);
      test.completeNow();
    }), 3);
  }

  /** No position may come after a release: a clean stop runs the statement that records it. */
  @Test
  void aStopRunsTheStatementThatRecordsTheLastRelease(Vertx vertx, VertxTestContext test) {
    List<String> statements = new ArrayList<>();
    AckEngine recording = recordingNobody(vertx, statements, TimeUnit.HOURS.toMillis(1));
    releasedAfterTheLastStatement(vertx, recording, heard -> recording.stop().onComplete(test.succeeding(stopped -> test.verify(() -> {
      assertEquals(List.of(AFTER, AFTER), statements);
      test.completeNow();
    }))), 2);
  }

  /**
   * {@code engine} applies {@link #AFTER}; once that is announced, a batch answered now is handed to
   * it. {@code next} is told what was heard ("recorded by N", "released by N") at every message
   * from the {@code from}th on.
   */
  private static void releasedAfterTheLastStatement(Vertx vertx, AckEngine engine, Consumer<List<String>> next, int from) {
    List<String> heard = new ArrayList<>();
    vertx.runOnContext(v -> vertx.eventBus().<PositionReached>consumer("reached", msg -> {
      heard.add(describe(msg.headers()));
      if (heard.size() == 1) {
        engine.pending(storedNow(new Pending(USER, 7, HEAD)));
      } else if (heard.size() >= from) {
        next.accept(heard);
      }
    }).completion().onSuccess(registered -> engine.observe(AFTER)));
  }

  private static String describe(MultiMap headers) {
    String number = headers.get(StatementNumber.HEADER);
    return (headers.contains(PositionReached.RELEASE_HEADER) ? "released by " : "recorded by ")
        + number.substring(number.lastIndexOf('/') + 1);
  }
}
