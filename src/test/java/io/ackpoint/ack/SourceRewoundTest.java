package io.ackpoint.ack;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.core.PositionReachedCodec;
import io.ackpoint.source.Lsn;
import io.ackpoint.storage.PgCheckpointStorage;
import io.ackpoint.storage.PgMigrations;
import io.ackpoint.support.Await;
import io.ackpoint.support.LogCapture;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.EventBus;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The engine's side of a source that went back: a head before what it applied starts a new engine,
 * once; the same rewind told again (by the follower, then by each node's batcher, at heads of the new
 * source read before or after) starts none, however far the new engine has gone since.
 */
@ExtendWith(VertxExtension.class)
class SourceRewoundTest {

  private static final String OLD_SERVER = "00000000/04000000";
  private static final String NEW_SERVER_AT_OPEN = "00000000/01900000";
  private static final String NEW_SERVER_MARKER = "00000000/01900300";
  private static final String NEW_SERVER_BATCH = "00000000/01900200";

  @Test
  void oneRewindToldByTheFollowerThenByABatchStartsOneEngine(Vertx vertx) {
    PositionReachedCodec.registerOn(vertx);
    Pool pool = new Sql(vertx, TestDatabase.freshDatabase()).pool();
    Await.result(PgMigrations.migrate(pool));
    AckpointAddresses addresses = new AckpointAddresses("rewound");
    try (LogCapture log = LogCapture.of(AckEngineVerticle.class.getName())) {
      Await.result(vertx.deployVerticle(new AckEngineVerticle(new PgCheckpointStorage(pool), Lsn.FORMAT, AckListener.NONE, addresses)));
      EventBus bus = vertx.eventBus();
      // Each message reaches the engine's verticle in the order sent; a request's answer says it was handled.
      bus.send(addresses.positionObserved(), OLD_SERVER);
      Await.result(bus.request(addresses.sourceRewound(), NEW_SERVER_AT_OPEN));
      assertEquals(1, log.messages("WARN").size(), "a head before what the engine applied: " + log.messages("WARN"));
      bus.send(addresses.positionObserved(), NEW_SERVER_MARKER);
      Await.result(bus.request(addresses.sourceRewound(), NEW_SERVER_BATCH));
      assertEquals(1, log.messages("WARN").size(), "the same rewind, told by a batch of the new server: " + log.messages("WARN"));
    }
  }
}
