package io.ackpoint.fault;

import io.ackpoint.config.AckpointConfig.DatabaseConfig;
import io.ackpoint.config.AckpointConfig.DatabaseType;
import io.ackpoint.impl.PgPools;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.Readiness;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.SilentServer;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TcpProxy;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.impl.SocketConnectionBase;
import io.vertx.sqlclient.internal.SqlConnectionInternal;
import io.vertx.sqlclient.SqlConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;

import static io.ackpoint.support.ApiClient.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A database that stops answering fails batches within bounded time, answered 503 with
 * Retry-After, and service resumes by itself: nothing piles up behind a stalled statement. The
 * bound is Ackpoint's own where the server cannot enforce one (frozen whole, a silent network):
 * nothing arriving on a connection for statement_timeout + connect_timeout (2 s here) closes it,
 * well before the batch's own timeout (the default 30 s, left as it is so that it cannot be what
 * answers).
 */
@ExtendWith(VertxExtension.class)
class StalledDatabaseTest {

  private Vertx vertx;
  private String db;
  private TcpProxy proxy;
  private RunningAckpoint app;
  private String token;

  @BeforeEach
  void setUp(Vertx vertx) {
    this.vertx = vertx;
    db = TestDatabase.freshDatabase();
    proxy = TcpProxy.start(vertx, "localhost", TestDatabase.port());
    token = TestKeys.token(vertx, "u");
  }

  @AfterEach
  void tearDown() {
    if (app != null) {
      app.close();
    }
    proxy.close();
  }

  private void start() {
    app = RunningAckpoint.on(vertx, db, config -> {
      JsonObject storage = config.getJsonObject("storage").put("uri", proxy.proxied(db))
          .put("statement_timeout", "1s").put("connect_timeout", "1s");
      config.put("storage", storage);
      config.put("batching", new JsonObject().put("max_in_flight_batches", 1));
      return config;
    });
  }

  @Test
  void aStatementStuckBehindALockIsCancelledByTheStatementTimeout() {
    start();
    assertEquals("1", data(app.api.checkpointRequest(token, "c", "1")).getString("checkpoint_request_id"));
    try (Sql locker = new Sql(vertx, db)) {
      SqlConnection held = Await.result(locker.pool().getConnection());
      Await.result(held.query("BEGIN").execute());
      Await.result(held.query("SELECT * FROM ackpoint_write_checkpoints FOR UPDATE").execute());
      HttpResponse<Buffer> stuck = app.api.checkpointRequest(token, "c", "2");
      assertEquals(503, stuck.statusCode(), stuck.bodyAsString());
      assertEquals("ACK_STORAGE_UNAVAILABLE", ApiClient.errorCode(stuck));
      assertEquals("1", stuck.getHeader("Retry-After"));
      Await.result(held.query("ROLLBACK").execute());
      Await.result(held.close());
    }
    assertEquals("2", data(app.api.checkpointRequest(token, "c", "2")).getString("checkpoint_request_id"));
  }

  @Test
  void aSilentlyStalledConnectionFailsItsBatchInBoundedTimeAndTheNextBatchSucceeds() {
    start();
    assertEquals("1", data(app.api.checkpointRequest(token, "c", "1")).getString("checkpoint_request_id"));
    // The batch statement is prepared once per connection: what every execution sends is its values.
    var stalled = proxy.stallWhenClientSends("client-of-the-stalled-batch");
    HttpResponse<Buffer> lost = app.api.checkpointRequest(token, "client-of-the-stalled-batch", "2");
    Await.result(stalled);
    assertEquals(503, lost.statusCode(), lost.bodyAsString());
    assertEquals("ACK_STORAGE_UNAVAILABLE", ApiClient.errorCode(lost), lost.bodyAsString());
    assertEquals("1", lost.getHeader("Retry-After"));
    // The only in-flight slot was given back and the dead connection dropped: service goes on.
    assertEquals("3", data(app.api.checkpointRequest(token, "c", "3")).getString("checkpoint_request_id"));
  }

  @Test
  void aDatabaseServerFrozenWholeFailsRequestsInBoundedTimeAndServiceResumesWhenItThaws() {
    start();
    assertEquals("1", data(app.api.checkpointRequest(token, "c", "1")).getString("checkpoint_request_id"));
    proxy.freeze();
    HttpResponse<Buffer> frozen = app.api.checkpointRequest(token, "c", "2");
    assertEquals(503, frozen.statusCode(), frozen.bodyAsString());
    assertEquals("ACK_STORAGE_UNAVAILABLE", ApiClient.errorCode(frozen), frozen.bodyAsString());
    // Frozen still: the connections that timed out are gone, and a new one is never answered.
    HttpResponse<Buffer> stillFrozen = app.api.checkpointRequest(token, "c", "2");
    assertEquals(503, stillFrozen.statusCode(), stillFrozen.bodyAsString());
    assertEquals("ACK_STORAGE_UNAVAILABLE", ApiClient.errorCode(stillFrozen), stillFrozen.bodyAsString());
    proxy.thaw();
    assertEquals("3", data(app.api.checkpointRequest(token, "c", "3")).getString("checkpoint_request_id"));
  }

  /** Each database is asked on its own: a frozen storage does not take the source's health down with it. */
  @Test
  void readinessNamesTheFrozenDatabaseAloneWhileTheOtherAnswers() {
    app = RunningAckpoint.on(vertx, db, config -> {
      config.getJsonObject("storage").put("uri", proxy.proxied(db));
      return config;
    });
    assertEquals(true, Readiness.probe(app).getBoolean("ready"));
    proxy.freeze();
    JsonObject readiness = Readiness.probe(app);
    proxy.thaw();
    assertEquals(false, readiness.getBoolean("storage"), readiness.encode());
    assertEquals(true, readiness.getBoolean("source"), readiness.encode());
    assertEquals("storage does not answer", readiness.getString("reason"));
  }

  /**
   * The bound counts from the last thing read or written: a statement sent on a connection that sat
   * idle for most of the bound still has all of it (counted from the last read alone, the connection
   * was closed in the middle of the statement).
   */
  @Test
  void aStatementOnAConnectionThatSatIdleHasItsWholeBound() throws InterruptedException {
    DatabaseConfig database = new DatabaseConfig(DatabaseType.POSTGRESQL, db, 1, Duration.ofSeconds(1), Duration.ofSeconds(2));
    Pool pool = PgPools.create(vertx, database, "silence-test");
    try {
      Await.result(pool.query("SELECT 1").execute());
      Thread.sleep(2_000); // the idleness under test (2 of the 3 s bound), not a wait for anything
      Await.result(pool.query("SELECT pg_sleep(1.5)").execute());
    } finally {
      Await.result(pool.close());
    }
  }

  /**
   * A connection that is owed no answer is idle, not silent: it outlives the bound, and the statement
   * after the idleness runs on it, not on a connection (and a server process) opened again.
   */
  @Test
  void anIdleConnectionOutlivesTheSilenceLimit() throws InterruptedException {
    DatabaseConfig database = new DatabaseConfig(DatabaseType.POSTGRESQL, db, 1, Duration.ofSeconds(1), Duration.ofSeconds(1));
    Pool pool = PgPools.create(vertx, database, "idle-test");
    try {
      int before = Await.result(pool.query("SELECT pg_backend_pid()").execute()).iterator().next().getInteger(0);
      Thread.sleep(3_000); // the idleness under test (the bound is 2 s), not a wait for anything
      int after = Await.result(pool.query("SELECT pg_backend_pid()").execute()).iterator().next().getInteger(0);
      assertEquals(before, after, "the same server process answers");
    } finally {
      Await.result(pool.close());
    }
  }

  /**
   * Closing a connection says goodbye to the server and waits for it to hang up; a server frozen
   * whole never does, so the wait is bounded by connect_timeout. Before, a connection whose start-up
   * the server never answered held the pool's close, and with it a graceful stop, for ever (the
   * silence limit began only once a connection had started up). statement_timeout is long here, so
   * that the silence limit cannot be what ends the wait.
   */
  @Test
  void aPoolClosesWithinConnectTimeoutWhileAStartUpIsNeverAnswered() {
    try (SilentServer frozen = SilentServer.start()) {
      Pool pool = PgPools.create(vertx, longSilence(frozen.postgresUri()), "frozen-start-up");
      Future<RowSet<Row>> query = pool.query("SELECT 1").execute();
      Await.result(Future.fromCompletionStage(frozen.firstBytes()));
      Await.result(pool.close(), Duration.ofSeconds(5));
      assertTrue(Await.result(query.transform(Future::succeededFuture)).failed(), "the query never reached a server");
    }
  }

  /**
   * The same when the goodbye cannot even be sent: it waits behind a statement larger than the
   * socket buffers, which the frozen server does not read (so the client never shuts its output,
   * which is what bounds the wait above).
   */
  @Test
  void aPoolClosesWithinConnectTimeoutWhileAStatementCannotBeSent() {
    Pool pool = PgPools.create(vertx, longSilence(proxy.proxied(db)), "frozen-mid-statement");
    SqlConnection connection = Await.result(pool.getConnection());
    Await.result(connection.query("SELECT 1").execute());
    Future<Void> blocked = unwritable(connection);
    proxy.freeze();
    // A simple query: its text goes at once (a prepared one would wait for its Parse to be answered).
    Future<RowSet<Row>> stuck = connection.query("SELECT length('" + "x".repeat(64 << 20) + "')").execute();
    Await.result(blocked);
    Await.result(pool.close(), Duration.ofSeconds(5));
    assertTrue(Await.result(stuck.transform(Future::succeededFuture)).failed(), "the statement never reached the server");
  }

  /** Completes once the connection's socket takes no more bytes: what it was given waits for the server to read. */
  private static Future<Void> unwritable(SqlConnection connection) {
    Promise<Void> full = Promise.promise();
    // The pool's wrapper, then the connection on the socket.
    SocketConnectionBase socket = (SocketConnectionBase) ((SqlConnectionInternal) connection).unwrap().unwrap();
    socket.socket().channelHandlerContext().pipeline().addFirst(new ChannelInboundHandlerAdapter() {
      @Override
      public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (!ctx.channel().isWritable()) {
          full.tryComplete();
        }
        ctx.fireChannelWritabilityChanged();
      }
    });
    return full.future();
  }

  private static DatabaseConfig longSilence(String uri) {
    return new DatabaseConfig(DatabaseType.POSTGRESQL, uri, 1, Duration.ofSeconds(1), Duration.ofSeconds(60));
  }

  /** What an operator sees of the above: a stop completes while the source is frozen whole. */
  @Test
  void anAckpointStopsWhileItsSourceIsFrozenWhole() {
    try (SilentServer frozen = SilentServer.start()) {
      RunningAckpoint stopping = RunningAckpoint.on(vertx, db, config -> {
        config.getJsonObject("source").put("uri", frozen.postgresUri())
            .put("connect_timeout", "1s").put("statement_timeout", "60s");
        return config;
      });
      try {
        JsonObject readiness = Readiness.probe(stopping);
        assertEquals(false, readiness.getBoolean("source"), readiness.encode());
        assertTrue(frozen.firstBytes().isDone(), "the source's pool never tried to connect");
        Await.result(stopping.ackpoint.close(), Duration.ofSeconds(15));
      } finally {
        stopping.api.close();
        stopping.sql.close();
      }
    }
  }
}
