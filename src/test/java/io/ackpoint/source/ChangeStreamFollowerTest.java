package io.ackpoint.source;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.config.AckpointConfig.DatabaseConfig;
import io.ackpoint.config.AckpointConfig.DatabaseType;
import io.ackpoint.config.AckpointConfig.ReplicationConfig;
import io.ackpoint.impl.MongoClients;
import io.ackpoint.support.Await;
import io.ackpoint.support.TestMongo;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.mongo.MongoClient;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The change-stream follower on the test server: markers become positions, and a restart resumes. */
@ExtendWith(VertxExtension.class)
class ChangeStreamFollowerTest {

  private static final AtomicInteger PREFIXES = new AtomicInteger();
  // Neither a heartbeat nor a periodic save within a test (they would write too): the token is saved on stop.
  private static final ReplicationConfig REPLICATION = new ReplicationConfig(true, "follower_test", "unused",
      Duration.ofSeconds(60), Duration.ofSeconds(60), Duration.ofMinutes(2));

  private Vertx vertx;
  private DatabaseConfig database;
  private MongoClient client;
  private MongoClient local;
  private MongoReplicationSource source;
  private AckpointAddresses addresses;
  private final BlockingQueue<String> observed = new LinkedBlockingQueue<>();

  @BeforeEach
  void connect(Vertx vertx) {
    this.vertx = vertx;
    String uri = TestMongo.freshDatabase();
    database = new DatabaseConfig(DatabaseType.MONGODB, uri, 4, Duration.ofSeconds(5), Duration.ofSeconds(10));
    client = MongoClients.create(vertx, database);
    local = MongoClients.on(vertx, database, "local");
    source = new MongoReplicationSource(client, () -> local);
    addresses = new AckpointAddresses("follower-test-" + PREFIXES.incrementAndGet());
    Await.result(vertx.eventBus().<String>localConsumer(addresses.positionObserved(), msg -> observed.add(msg.body())).completion());
  }

  @AfterEach
  void close() {
    Await.result(client.close());
    Await.result(local.close());
  }

  private String deploy() {
    return deploy(ReplicationListener.NONE);
  }

  private String deploy(ReplicationListener metrics) {
    return Await.result(vertx.deployVerticle(new ChangeStreamFollowerVerticle(
        listener -> MongoClients.withListener(vertx, database, listener), REPLICATION, source, addresses, metrics)));
  }

  private String nextPosition() throws InterruptedException {
    String position = observed.poll(30, TimeUnit.SECONDS);
    assertNotNull(position, "no position observed within 30 s");
    return position;
  }

  /** Writes a marker and answers its position (the newest oplog entry: nothing else writes meanwhile). */
  private String marker() {
    Await.result(source.forceMarker());
    return Await.result(source.readHead());
  }

  @Test
  void everyMarkerIsAPositionAndARestartResumesAfterTheSavedToken() throws InterruptedException {
    String deployment = deploy();
    String opening = nextPosition();
    assertTrue(opening.matches("[0-9A-F]{16}"), "the marker forced as the stream opened: " + opening);
    String first = marker();
    assertEquals(first, nextPosition());
    Await.result(vertx.undeploy(deployment));
    JsonObject saved = Await.result(client.findOne(ResumeTokens.COLLECTION, new JsonObject().put("_id", "follower_test"), null));
    assertEquals(first, saved.getString("position"), "the newest token is saved on stop");

    // Written while no follower runs: a fresh stream would never see them, a resumed one does.
    String whileStopped = marker();
    String alsoWhileStopped = marker();
    deploy();
    assertEquals(whileStopped, nextPosition());
    assertEquals(alsoWhileStopped, nextPosition());
    assertTrue(nextPosition().compareTo(alsoWhileStopped) > 0, "then the marker forced as the stream opened again");
  }

  /**
   * A saved token that is none (a document edited by hand), or one the server refuses, is dropped and
   * the stream follows from the present: the marker forced as it opens passes every checkpoint
   * stored before. It had the follower retry the same refusal for ever, or refused the start as if
   * the source could not run change streams at all.
   */
  @Test
  void aSavedTokenThatIsNoneOrThatTheServerRefusesIsDroppedAndTheFollowerFollowsFromThePresent() throws InterruptedException {
    for (Object saved : List.of("garbage", new JsonObject().put("_data", "zz"))) {
      Await.result(client.save(ResumeTokens.COLLECTION, new JsonObject().put("_id", "follower_test").put("resume_token", saved)));
      String deployment = deploy();
      nextPosition(); // the marker forced as the stream opened
      String next = marker();
      assertEquals(next, nextPosition(), "followed, after a saved " + saved);
      Await.result(vertx.undeploy(deployment));
      observed.clear();
    }
  }

  /** Every marker was refused (type mismatch) once the counter was edited into a string: every checkpoint failed. */
  @Test
  void aMarkerDocumentWhoseCounterIsNoNumberIsSetAgainAndTheMarkerFollowed() throws InterruptedException {
    deploy();
    nextPosition(); // the marker forced as the stream opened
    Await.result(client.save(MongoReplicationSource.MARKERS, new JsonObject().put("_id", "checkpoint").put("i", "x")));
    nextPosition(); // the edit itself, a change of the watched collection
    String repaired = marker();
    assertEquals(repaired, nextPosition(), "the repairing marker is followed");
    assertEquals(marker(), nextPosition(), "and the next one counts on");
  }

  /**
   * After a saved token ahead of the oplog the stream opens and stays silent, markers written every
   * heartbeat and none coming back: it said it followed while nothing was acknowledged. Three
   * heartbeats on it is opened again from the present.
   */
  @Test
  void aStreamThatStaysSilentWhileMarkersAreWrittenIsOpenedAgainFromThePresent() throws InterruptedException {
    Await.result(client.save(ResumeTokens.COLLECTION, new JsonObject().put("_id", "follower_test")
        .put("resume_token", new JsonObject().put("_data", "7fffffffffffffff"))));
    ReplicationConfig heartbeats = new ReplicationConfig(true, "follower_test", "unused",
        Duration.ofMillis(200), Duration.ofSeconds(60), Duration.ofMinutes(2));
    Await.result(vertx.deployVerticle(new ChangeStreamFollowerVerticle(
        listener -> MongoClients.withListener(vertx, database, listener), heartbeats, source, addresses, ReplicationListener.NONE)));
    nextPosition(); // a marker of the stream opened again
    String next = marker();
    String seen = nextPosition();
    while (seen.compareTo(next) < 0) {
      seen = nextPosition(); // heartbeats' markers before it
    }
    assertEquals(next, seen, "followed from the present");
  }

  /** A node that stopped following (it stepped down, or stops) kept telling the metrics that it followed. */
  @Test
  void aStoppedFollowerNoLongerReportsThatItFollows() throws Exception {
    FollowerUpRecorder metrics = new FollowerUpRecorder();
    String deployment = deploy(metrics);
    metrics.awaitFollowing();
    Await.result(vertx.undeploy(deployment));
    assertFalse(metrics.last(), "follower up after the undeploy");
  }

  @Test
  void positionsOnlyMoveForward() throws InterruptedException {
    deploy();
    String previous = nextPosition();
    for (int i = 0; i < 5; i++) {
      marker();
      String next = nextPosition();
      assertTrue(next.compareTo(previous) > 0, previous + " then " + next);
      previous = next;
    }
  }
}
