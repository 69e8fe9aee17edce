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
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The acknowledgement engine on real storage: what it announces, and what every node can learn from that. */
@ExtendWith(VertxExtension.class)
class AckEngineTest {

  private static final String HEARD = "00000000/00000050";
  private static final String HEAD = "00000000/00000100";
  private static final String LOST = "00000000/00000150";

  /**
   * The acknowledgement statement commits and its answer never arrives (the connection is cut after
   * the commit, the server crashes): the rows it marked are no longer pending, so no later statement
   * returns them. Every node that heard the engine's announcements must then read them back.
   */
  @Test
  @Timeout(value = 10, timeUnit = TimeUnit.SECONDS)
  void usersMarkedByAStatementWhoseAnswerWasLostAreReadBackByEveryNode(Vertx vertx, VertxTestContext test) {
    PositionReachedCodec.registerOn(vertx);
    Sql sql = new Sql(vertx, TestDatabase.freshDatabase());
    Await.result(PgMigrations.migrate(sql.pool()));
    PgCheckpointStorage storage = new PgCheckpointStorage(sql.pool());
    FullUserId user = FullUserId.of("u", "c");
    Await.result(storage.store(HEAD, List.of(new CheckpointWrite(user, true, null))));

    vertx.runOnContext(started -> {
      MissedAnnouncements missed = new MissedAnnouncements(vertx, new PgAcknowledgementHistory(sql.pool()),
          (position, users) -> test.verify(() -> {
            assertEquals(LOST, position);
            assertEquals(List.of(new Reached(user, 1)), users);
            test.completeNow();
          }));
      vertx.eventBus().<PositionReached>consumer("reached", msg -> missed.heard(msg.body()));
      AckEngine engine = new AckEngine(vertx, answerLostOnce(storage), Lsn.FORMAT, "reached", AckListener.NONE);
      engine.observe(HEARD);
      vertx.eventBus().<PositionReached>consumer("reached", msg -> {
        if (msg.body().position().equals(HEARD)) {
          engine.observe(LOST);
        }
      });
    });
  }

  /** {@code storage}, but the first statement that marks anyone fails after it committed. */
  private static CheckpointStorage answerLostOnce(CheckpointStorage storage) {
    AtomicBoolean lost = new AtomicBoolean();
    return (CheckpointStorage) Proxy.newProxyInstance(CheckpointStorage.class.getClassLoader(),
        new Class<?>[] {CheckpointStorage.class}, (proxy, method, args) -> {
          Object result;
          try {
            result = method.invoke(storage, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
          if (!method.getName().equals("markProcessed")) {
            return result;
          }
          @SuppressWarnings("unchecked")
          Future<List<Reached>> marked = (Future<List<Reached>>) result;
          return marked.compose(reached -> !reached.isEmpty() && lost.compareAndSet(false, true)
              ? Future.failedFuture("the connection was closed after the commit")
              : Future.succeededFuture(reached));
        });
  }
}
