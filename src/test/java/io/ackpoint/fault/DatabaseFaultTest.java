package io.ackpoint.fault;

import io.ackpoint.Ackpoint;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.Sql;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TcpProxy;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.function.UnaryOperator;

import static io.ackpoint.support.ApiClient.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Faults between Ackpoint and PostgreSQL, made by a TCP proxy on the storage or the source
 * connections: a cut fails exactly the batch it hits, with a clear 503, and nothing acknowledged is lost.
 */
@ExtendWith(VertxExtension.class)
class DatabaseFaultTest {

  private Vertx vertx;
  private String db;
  private Sql sql;
  private TcpProxy proxy;
  private Ackpoint ackpoint;
  private JsonObject config;
  private ApiClient api;
  private String token;

  @BeforeEach
  void setUp(Vertx vertx) {
    this.vertx = vertx;
    db = TestDatabase.freshDatabase();
    sql = new Sql(vertx, db);
    proxy = TcpProxy.start(vertx, "localhost", TestDatabase.port());
    token = TestKeys.token(vertx, "u");
  }

  @AfterEach
  void tearDown() {
    if (ackpoint != null) {
      Await.result(ackpoint.close());
    }
    proxy.close();
    sql.close();
  }

  private void start(boolean storageThroughProxy, boolean sourceThroughProxy, boolean follower) {
    start(storageThroughProxy, sourceThroughProxy, follower, c -> c);
  }

  private void start(boolean storageThroughProxy, boolean sourceThroughProxy, boolean follower,
                     UnaryOperator<JsonObject> customize) {
    config = customize.apply(TestAckpoint.configJson(db));
    if (follower) {
      TestAckpoint.withFollower(config);
    }
    if (storageThroughProxy) {
      config.getJsonObject("storage").put("uri", proxy.proxied(db));
    }
    if (sourceThroughProxy) {
      config.getJsonObject("source").put("uri", proxy.proxied(db));
    }
    ackpoint = Await.result(TestAckpoint.start(vertx, config));
    api = new ApiClient(vertx, TestAckpoint.portOf(config));
  }

  @Test
  void aStorageConnectionCutInTheMiddleOfABatchFailsThatBatchWith503AndTheNextSucceeds() {
    start(true, false, false);
    var cut = proxy.cutWhenClientSends("ON CONFLICT (user_id, client_id) DO UPDATE");
    HttpResponse<Buffer> failed = api.writeCheckpoint2(token, "c1");
    Await.result(cut);
    assertEquals(503, failed.statusCode());
    assertEquals("ACK_STORAGE_UNAVAILABLE", ApiClient.errorCode(failed));
    assertFalse(failed.bodyAsString().contains("Exception"), "no stack trace: " + failed.bodyAsString());
    assertEquals(0, sql.checkpointRows(), "the cut statement never reached the database");

    assertEquals("1", data(api.writeCheckpoint2(token, "c1")).getString("write_checkpoint"));
  }

  /** A stream's response is chunked from the start: its error answer must not also carry a Content-Length. */
  @Test
  void aStreamThatCannotReadItsLatestIdIsA503FramedOneWayOnly() throws Exception {
    start(true, false, false);
    var cut = proxy.cutWhenClientSends("ELSE acknowledged_checkpoint END");
    String head;
    try (Socket socket = new Socket("127.0.0.1", TestAckpoint.portOf(config))) {
      socket.getOutputStream().write(("POST /sync/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Token " + token
          + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
          .getBytes(StandardCharsets.US_ASCII));
      String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
      head = answer.substring(0, Math.max(0, answer.indexOf("\r\n\r\n"))).toLowerCase(Locale.ROOT);
    }
    Await.result(cut);
    assertTrue(head.startsWith("http/1.1 503"), head);
    assertFalse(head.contains("content-length:") && head.contains("transfer-encoding:"), head);
  }

  @Test
  void aFailedMarkerIsForcedAgainByTheClientsRetry() {
    String peek = "peek_" + db.substring(db.lastIndexOf('/') + 1);
    sql.query("SELECT pg_create_logical_replication_slot($1, 'test_decoding')", peek);
    try {
      start(false, true, false);
      var cut = proxy.cutWhenClientSends("pg_logical_emit_message");
      HttpResponse<Buffer> failed = api.checkpointRequest(token, "c1", "7");
      Await.result(cut);
      assertEquals(503, failed.statusCode());
      assertEquals("ACK_SOURCE_UNAVAILABLE", ApiClient.errorCode(failed));
      assertEquals(0, markers(peek), "the marker never reached the source");
      assertEquals(1, sql.count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE processed_at_lsn IS NULL"),
          "the checkpoint was stored and waits for replication");

      // The client retries the same id: the row is still pending, so the marker is forced again.
      assertEquals("7", data(api.checkpointRequest(token, "c1", "7")).getString("checkpoint_request_id"));
      assertEquals(1, markers(peek));
    } finally {
      if (ackpoint != null) {
        Await.result(ackpoint.close());
        ackpoint = null;
      }
      sql.query("SELECT pg_drop_replication_slot($1)", peek);
    }
  }

  private long markers(String slot) {
    return sql.count("SELECT count(*) FROM pg_logical_slot_peek_changes($1, NULL, NULL) WHERE data LIKE 'message:%prefix: ackpoint%'", slot);
  }

  @Test
  void aCheckpointThatGot200IsAcknowledgedAfterEveryConnectionWasCut() {
    start(true, true, true);
    try (StreamClient stream = StreamClient.syncStream(vertx, TestAckpoint.portOf(config), token, "c1")) {
      stream.next();
      stream.next();
      assertEquals(200, api.checkpointRequest(token, "c1", "3").statusCode());
      assertEquals("3", stream.nextMatching(l -> l.containsKey("checkpoint_diff")).getJsonObject("checkpoint_diff").getString("write_checkpoint"));

      // Storage, source and the replication stream all lose their connections at once.
      proxy.cutAll();
      HttpResponse<Buffer> next = api.checkpointRequest(token, "c1", "4");
      for (int retry = 0; retry < 100 && next.statusCode() == 503; retry++) {
        // A client retries a 503; the pools reconnect through the proxy.
        next = api.checkpointRequest(token, "c1", "4");
      }
      assertEquals(200, next.statusCode());
      assertEquals("4", stream.nextMatching(l -> l.containsKey("checkpoint_diff")).getJsonObject("checkpoint_diff").getString("write_checkpoint"));
    }
  }

  @Test
  void aCustomCheckpointWhoseStoreWasCutIsStoredAndAcknowledgedAllTheSame() {
    sql.query("CREATE TABLE checkpoints (id BIGSERIAL PRIMARY KEY, user_id TEXT NOT NULL, checkpoint BIGINT NOT NULL,"
        + " client_id TEXT)");
    start(true, false, true, c -> c.put("checkpoints", new JsonObject().put("mode", "custom")));
    try (StreamClient stream = StreamClient.syncStream(vertx, TestAckpoint.portOf(config), token, "c1")) {
      stream.next();
      stream.next();
      // The storage connection dies exactly when the custom rows are being stored, and again when
      // they are stored the second time: a second attempt exists only if the position was not
      // confirmed to the slot, which then sent the transaction again after the stream restarted.
      var cut = proxy.cutWhenClientSends("AS r(user_id, client_id, checkpoint, request)", 2);
      sql.query("INSERT INTO checkpoints (user_id, checkpoint, client_id) VALUES ('u', 41, 'c1')");
      Await.result(cut);
      assertEquals("41", stream.nextMatching(l -> l.containsKey("checkpoint_diff"))
          .getJsonObject("checkpoint_diff").getString("write_checkpoint"));
    }
    assertEquals(1, sql.count("SELECT count(*) FROM ackpoint_write_checkpoints"
        + " WHERE user_id = 'u' AND client_id = 'c1' AND write_checkpoint = 41 AND processed_at_lsn IS NOT NULL"));
  }
}
