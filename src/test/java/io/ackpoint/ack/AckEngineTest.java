package io.ackpoint.ack;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.PositionReached;
import io.ackpoint.core.PositionReachedCodec;
import io.ackpoint.core.Reached;
import io.ackpoint.source.Lsn;
import io.ackpoint.storage.CheckpointStorage;
import io.ackpoint.storage.PgAcknowledgementHistory;
import io.ackpoint.storage.PgCheckpointStorage;
import io.ackpoint.storage.PgMigrations;
import io.ackpoint.support.Await;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestDatabase;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxException;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The acknowledgement engine on real storage, when its statement fails: what it announces next, and
 * what every node learns from that. A failed statement is applied again after a second.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 10, timeUnit = TimeUnit.SECONDS)
class AckEngineTest {

  private static final String HEARD = "00000000/00000050";
  private static final String HEAD = "00000000/00000100";
  private static final String FAILED = "00000000/00000150";
  private static final FullUserId USER = FullUserId.of("u", "c");

  private Pool pool;
  private PgCheckpointStorage storage;

  @BeforeEach
  void pendingCheckpoint(Vertx vertx) {
    PositionReachedCodec.registerOn(vertx);
    pool = new Sql(vertx, TestDatabase.freshDatabase()).pool();
    Await.result(PgMigrations.migrate(pool));
    storage = new PgCheckpointStorage(pool);
    Await.result(storage.store(HEAD, List.of(new CheckpointWrite(USER, true, null))));
  }

  /**
   * The statement commits and its answer never arrives (the connection is cut after the commit, the
   * server crashes): the rows it marked are no longer pending, so no later statement returns them.
   * Every node that heard the engine's announcements must then read them back.
   */
  @Test
  void usersMarkedByAStatementWhoseAnswerWasLostAreReadBackByEveryNode(Vertx vertx, VertxTestContext test) {
    CheckpointStorage answerLost = failingOnceAt(FAILED, true, new VertxException("the connection was closed"));
    vertx.runOnContext(started -> {
      MissedAnnouncements missed = new MissedAnnouncements(vertx, new PgAcknowledgementHistory(pool),
          readBack -> test.verify(() -> {
            assertEquals(FAILED, readBack.position());
            assertEquals(List.of(new Reached(USER, 1)), readBack.users());
            assertEquals(readBack.users(), readBack.notTold(), "no announcement told it");
            test.completeNow();
          }));
      engineAfterHeard(vertx, answerLost, missed::heard);
    });
  }

  /** A statement the database refused (an ERROR aborts its transaction) marked nothing: nobody scans storage for it. */
  @Test
  void aStatementTheDatabaseRefusedHasNoNodeReadBack(Vertx vertx, VertxTestContext test) {
    CheckpointStorage refused = failingOnceAt(FAILED, false,
        new PgException("canceling statement due to statement timeout", "ERROR", "57014", null));
    vertx.runOnContext(started -> engineAfterHeard(vertx, refused, (reached, engine) -> {
      if (reached.position().equals(FAILED)) {
        test.verify(() -> {
          assertEquals(HEARD, reached.previous(), "the announcement names the one before it");
          assertEquals(List.of(new Reached(USER, 1)), reached.reached());
        });
        test.completeNow();
      }
    }));
  }

  /** An engine whose announcements go to {@code announced}; it applies {@link #HEARD}, then {@link #FAILED}. */
  private static void engineAfterHeard(Vertx vertx, CheckpointStorage storage,
                                       BiConsumer<PositionReached, AnnouncingEngine> announced) {
    AckEngine engine = new AckEngine(vertx, storage, Lsn.FORMAT, "reached", "heard", AckListener.NONE);
    vertx.eventBus().<PositionReached>consumer("reached", msg -> {
      announced.accept(msg.body(), AnnouncingEngine.of(msg.headers()));
      if (msg.body().position().equals(HEARD)) {
        engine.observe(FAILED);
      }
    });
    engine.observe(HEARD);
  }

  /**
   * This test's storage, but its first statement at {@code position} fails with {@code failure},
   * after it {@code committed} or without running.
   */
  private CheckpointStorage failingOnceAt(String position, boolean committed, Throwable failure) {
    AtomicBoolean failed = new AtomicBoolean();
    return (CheckpointStorage) Proxy.newProxyInstance(CheckpointStorage.class.getClassLoader(),
        new Class<?>[] {CheckpointStorage.class}, (proxy, method, args) -> {
          boolean fails = method.getName().equals("markProcessed") && args[0].equals(position)
              && failed.compareAndSet(false, true);
          if (fails && !committed) {
            return Future.failedFuture(failure);
          }
          Object result;
          try {
            result = method.invoke(storage, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
          return fails ? ((Future<?>) result).compose(marked -> Future.failedFuture(failure)) : result;
        });
  }
}
