package io.ackpoint.source;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.config.AckpointConfig;
import io.ackpoint.support.Await;
import io.ackpoint.support.DeadSockets;
import io.ackpoint.support.LogCapture;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TcpProxy;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The PostgreSQL follower's own thread: what goes wrong on it is reported and survived. */
@ExtendWith(VertxExtension.class)
class ReplicationFollowerTest {

  private Vertx vertx;
  private String db;
  private Sql sql;
  private AckpointConfig config;
  private AckpointAddresses addresses;
  private final BlockingQueue<String> observed = new LinkedBlockingQueue<>();

  @BeforeEach
  void setUp(Vertx vertx) {
    this.vertx = vertx;
    db = TestDatabase.freshDatabase();
    sql = new Sql(vertx, db);
    config = TestAckpoint.config(TestAckpoint.withFollower(TestAckpoint.configJson(db)));
    addresses = new AckpointAddresses("replication-follower-test");
    Await.result(vertx.eventBus().<String>localConsumer(addresses.positionObserved(), msg -> observed.add(msg.body())).completion());
  }

  @AfterEach
  void tearDown() {
    sql.query("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active",
        config.replication().slotName());
    sql.close();
  }

  /**
   * An {@code Error} (here from the metrics, told that the follower runs) used to end the follower's
   * thread without a word: the verticle never started, and a follower that had started stayed
   * "ready" while nothing followed. It is logged with its trace and the stream opened again.
   */
  @Test
  void anErrorOnTheFollowersThreadIsLoggedAndTheFollowerCarriesOn() throws InterruptedException {
    AtomicBoolean thrown = new AtomicBoolean();
    ReplicationListener failingOnce = new ReplicationListener() {
      @Override
      public void followerUp(boolean up) {
        if (up && thrown.compareAndSet(false, true)) {
          throw new StackOverflowError("thrown by the test");
        }
      }
    };
    PgReplicationSource source = new PgReplicationSource(sql.pool());
    try (LogCapture log = LogCapture.of("io.ackpoint.source.FollowerStatus")) {
      String deployment = Await.result(vertx.deployVerticle(
          new ReplicationFollowerVerticle(db, config.replication(), null, source, addresses, failingOnce)));
      // The stream opened again writes a marker at once (the heartbeat after every connect).
      String position = observed.poll(30, TimeUnit.SECONDS);
      assertNotNull(position, "no position observed after the error");
      assertTrue(thrown.get());
      String error = log.awaitMessage("ERROR", Duration.ofSeconds(10));
      assertTrue(error.contains("thrown by the test"), error);
      Await.result(vertx.undeploy(deployment));
    }
  }

  /**
   * A stream whose network is gone hears nothing and fails no read before its silence limit (three
   * heartbeats): it said it followed all the while, and a cluster's leader cut off from the database
   * kept the slot. A periodic heartbeat marker that fails (here the source's pool reaches no server)
   * opens the stream again, which tells the listener again that it follows.
   */
  @Test
  void aHeartbeatMarkerThatFailsOpensTheStreamAgain() throws Exception {
    CompletableFuture<Void> reopened = new CompletableFuture<>();
    AtomicInteger opened = new AtomicInteger();
    ReplicationListener listener = new ReplicationListener() {
      @Override
      public void followerUp(boolean up) {
        if (up && opened.incrementAndGet() == 2) {
          reopened.complete(null);
        }
      }
    };
    AckpointConfig.ReplicationConfig r = config.replication();
    AckpointConfig.ReplicationConfig everySecond = new AckpointConfig.ReplicationConfig(r.follower(), r.slotName(),
        r.publication(), Duration.ofSeconds(1), r.statusInterval(), r.progressTimeout());
    Pool unreachable = PgBuilder.pool()
        .connectingTo(PgConnectOptions.fromUri("postgresql://postgres@127.0.0.1:" + TestAckpoint.freePort() + "/none"))
        .using(vertx).build();
    try {
      String deployment = Await.result(vertx.deployVerticle(new ReplicationFollowerVerticle(db, everySecond, null,
          new PgReplicationSource(unreachable), addresses, listener)));
      reopened.get(30, TimeUnit.SECONDS);
      Await.result(vertx.undeploy(deployment));
    } finally {
      unreachable.close();
    }
  }

  /**
   * A walsender terminated on the server fails the stream, which is opened again, and the failed
   * connection's socket is closed with it: PgJDBC let go of it without closing it when its goodbye
   * could not be sent, and it stayed open until a garbage collection, one per reconnect.
   */
  @Test
  void aTerminatedStreamLeavesNoSocketOpenBehindIt() throws Exception {
    BlockingQueue<Boolean> ups = new LinkedBlockingQueue<>();
    ReplicationListener listener = new ReplicationListener() {
      @Override
      public void followerUp(boolean up) {
        if (up) {
          ups.add(true);
        }
      }
    };
    String deployment = Await.result(vertx.deployVerticle(new ReplicationFollowerVerticle(db, config.replication(), null,
        new PgReplicationSource(sql.pool()), addresses, listener)));
    assertNotNull(ups.poll(30, TimeUnit.SECONDS), "the follower never followed");
    long before = DeadSockets.count();
    int terminations = 3;
    for (int i = 0; i < terminations; i++) {
      sql.query("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1",
          config.replication().slotName());
      assertNotNull(ups.poll(30, TimeUnit.SECONDS), "the follower did not follow again after termination " + (i + 1));
    }
    long after = DeadSockets.count();
    // Without the fix, one more each time (unless a garbage collection ran meanwhile).
    assertTrue(after - before < terminations, "sockets closed by the server and still open here: " + before + " -> " + after);
    Await.result(vertx.undeploy(deployment));
  }

  /** A node that stopped following (it stepped down, or stops) kept telling the metrics that it followed. */
  @Test
  void aStoppedFollowerNoLongerReportsThatItFollows() throws Exception {
    FollowerUpRecorder metrics = new FollowerUpRecorder();
    String deployment = Await.result(vertx.deployVerticle(new ReplicationFollowerVerticle(db, config.replication(), null,
        new PgReplicationSource(sql.pool()), addresses, metrics)));
    metrics.awaitFollowing();
    Await.result(vertx.undeploy(deployment));
    assertFalse(metrics.last(), "follower up after the undeploy");
  }

  /**
   * A follower undeployed while it connects (here to a server that answers nothing) used to leave its
   * thread behind, blocked in the connection, which then went on to open the replication stream and
   * hold the slot after the node had stopped (a node taking over found the slot in use). The undeploy
   * completes once the thread has left the follower's loop, and the stop reaches it in the connect:
   * the undeploy does not wait for the login to time out (30 s).
   */
  @Test
  void theUndeployCompletesOnceTheFollowersThreadHasLeftItsLoop() {
    TcpProxy proxy = TcpProxy.start(vertx, "localhost", TestDatabase.port());
    try {
      PgReplicationSource source = new PgReplicationSource(sql.pool());
      String deployment = Await.result(vertx.deployVerticle(new ReplicationFollowerVerticle(proxy.proxied(db),
          config.replication(), null, source, addresses, ReplicationListener.NONE)));
      Future<Void> reconnecting = proxy.nextConnection();
      proxy.freeze();
      proxy.cutAll();
      // The follower lost its stream and connects again, to a server that now answers nothing.
      Await.result(reconnecting);
      Await.result(vertx.undeploy(deployment), Duration.ofSeconds(20));
      assertEquals(List.of(), threadsInTheFollowersLoop(deployment));
    } finally {
      proxy.close();
    }
  }

  /**
   * A deployment undone while its start is pending (Vert.x closed during the follower's first
   * attempt) is not stopped: its worker pool is shut down, which interrupts the thread. Here the
   * interrupt lands while the slot is being created (the server waits for a transaction the test
   * holds open), which no interrupt cuts short. Taken for a failure once the stream had opened, it
   * made every later pause and connect return at once: the follower retried without end. It ends
   * the loop.
   */
  @Test
  void closingVertxWhileTheSlotIsCreatedEndsTheFollowersThread() throws InterruptedException {
    TcpProxy proxy = TcpProxy.start(vertx, "localhost", TestDatabase.port());
    Vertx closing = Vertx.vertx();
    SqlConnection holder = Await.result(sql.pool().getConnection());
    try {
      // A logical slot is created once every transaction with an id that ran at its start has ended.
      Transaction open = Await.result(holder.begin());
      Await.result(holder.query("SELECT txid_current()").execute());
      Future<Void> creating = proxy.whenClientSends("CREATE_REPLICATION_SLOT");
      closing.deployVerticle(new ReplicationFollowerVerticle(proxy.proxied(db), config.replication(), null,
          new PgReplicationSource(sql.pool()), addresses, ReplicationListener.NONE));
      Await.result(creating);
      List<Thread> followers = List.copyOf(threadsInTheFollowersLoop().keySet());
      assertEquals(1, followers.size(), "one follower thread, creating the slot");
      Await.result(closing.close());
      Await.result(open.commit());
      followers.get(0).join(Duration.ofSeconds(20).toMillis());
      assertFalse(followers.get(0).isAlive(), "the follower's thread ended");
    } finally {
      holder.close();
      proxy.close();
    }
  }

  /** The threads that are running the follower's loop, with where they are. */
  private static Map<Thread, StackTraceElement[]> threadsInTheFollowersLoop() {
    Map<Thread, StackTraceElement[]> inLoop = new HashMap<>();
    Thread.getAllStackTraces().forEach((thread, stack) -> {
      if (Arrays.stream(stack).anyMatch(frame -> frame.getClassName().equals(ReplicationFollowerVerticle.class.getName()))) {
        inLoop.put(thread, stack);
      }
    });
    return inLoop;
  }

  /** Those of that deployment's follower. */
  private static List<String> threadsInTheFollowersLoop(String deployment) {
    return threadsInTheFollowersLoop().entrySet().stream()
        .filter(thread -> thread.getKey().getName().startsWith("ackpoint-replication-" + deployment + "-"))
        .map(thread -> thread.getKey().getName() + " at " + Arrays.toString(thread.getValue()))
        .toList();
  }
}
