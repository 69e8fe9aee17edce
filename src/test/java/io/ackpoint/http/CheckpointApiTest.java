package io.ackpoint.http;

import io.ackpoint.support.ApiClient;
import io.ackpoint.support.AckpointExtension;
import io.ackpoint.support.TestKeys;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.List;

import static io.ackpoint.support.ApiClient.data;
import static io.ackpoint.support.ApiClient.errorCode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(VertxExtension.class)
class CheckpointApiTest {

  @RegisterExtension
  final AckpointExtension app = AckpointExtension.with(config -> config);
  private final String token = TestKeys.token("u1");

  @Test
  void generatedCheckpointStartsAtOneAndIncrementsPerFullUserId() {
    assertEquals("1", data(app.api().writeCheckpoint2(token, "c1")).getString("write_checkpoint"));
    assertEquals("2", data(app.api().writeCheckpoint2(token, "c1")).getString("write_checkpoint"));
    assertEquals("1", data(app.api().writeCheckpoint2(token, "c2")).getString("write_checkpoint"));
    assertEquals("1", data(app.api().writeCheckpoint2(token, null)).getString("write_checkpoint"));
    assertEquals(1, app.sql().count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE user_id = 'u1' AND client_id = 'c1'"));
    assertEquals(1, app.sql().count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE user_id = 'u1' AND client_id = ''"));
  }

  @Test
  void generatedCheckpointStoresTheHeadAsPendingWithoutRequestTime() {
    app.api().writeCheckpoint2(token, "c1");
    var row = app.sql().query("SELECT lsns->>'1', processed_at_lsn, checkpoint_requested_at FROM ackpoint_write_checkpoints").iterator().next();
    assertTrue(row.getString(0).matches("[0-9A-F]{8}/[0-9A-F]{8}"), row.getString(0));
    assertNull(row.getValue(1));
    assertNull(row.getValue(2));
  }

  @Test
  void responsesCarryIdsAsJsonStringsInTheDataEnvelope() {
    HttpResponse<Buffer> response = app.api().writeCheckpoint2(token, "c1");
    assertEquals(200, response.statusCode());
    assertTrue(response.getHeader("content-type").startsWith("application/json"));
    assertEquals("{\"data\":{\"write_checkpoint\":\"1\"}}", response.bodyAsString());
  }

  @Test
  void suppliedIdIsStoredOnlyWhenGreaterAndTheAnswerIsTheStoredId() {
    assertEquals("5", data(app.api().checkpointRequest(token, "c1", "5")).getString("checkpoint_request_id"));
    assertEquals("5", data(app.api().checkpointRequest(token, "c1", "3")).getString("checkpoint_request_id"));
    assertEquals("5", data(app.api().checkpointRequest(token, "c1", "5")).getString("checkpoint_request_id"));
    assertEquals("9", data(app.api().checkpointRequest(token, "c1", 9)).getString("checkpoint_request_id"));
    assertEquals(9, app.sql().count("SELECT write_checkpoint FROM ackpoint_write_checkpoints WHERE user_id = 'u1' AND client_id = 'c1'"));
  }

  @Test
  void suppliedIdsAcceptTheFullInt64RangeAsStrings() {
    HttpResponse<Buffer> response = app.api().checkpointRequest(token, "c1", "9223372036854775807");
    assertEquals("9223372036854775807", data(response).getString("checkpoint_request_id"));
  }

  /** SPEC section 2 bounds the value, not the digits: leading zeros, however many, do not count. */
  @Test
  void suppliedIdsWithLeadingZerosAreTheirValueWhateverTheirLength() {
    assertEquals("42", data(app.api().checkpointRequest(token, "c1", "000000000000000000000042")).getString("checkpoint_request_id"));
    assertEquals("9223372036854775807",
        data(app.api().checkpointRequest(token, "c2", "0009223372036854775807")).getString("checkpoint_request_id"));
  }

  @Test
  void checkpointRequestSetsRequestedAt() {
    app.api().checkpointRequest(token, "c1", "4");
    assertEquals(1, app.sql().count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE checkpoint_requested_at IS NOT NULL"));
  }

  @Test
  void usersDoNotShareCheckpoints() {
    String other = TestKeys.token("u2");
    app.api().checkpointRequest(token, "c1", "8");
    assertEquals("1", data(app.api().checkpointRequest(other, "c1", "1")).getString("checkpoint_request_id"));
    assertEquals("1", data(app.api().writeCheckpoint2(other, "c9")).getString("write_checkpoint"));
  }

  @Test
  void unknownPathIsAJson404() {
    HttpResponse<Buffer> response = ApiClient.send(app.api().request(HttpMethod.GET, "/no/such/route"), null);
    assertEquals(404, response.statusCode());
    assertEquals("ACK_NOT_FOUND", errorCode(response));
    assertEquals(404, response.bodyAsJsonObject().getJsonObject("error").getInteger("status"));
    assertNotNull(response.bodyAsJsonObject().getJsonObject("error").getString("description"));
  }

  @Test
  void wrongMethodIsAJson405() {
    HttpResponse<Buffer> response = ApiClient.send(app.api().request(HttpMethod.DELETE, "/write-checkpoint2.json"), null);
    assertEquals(405, response.statusCode());
    assertEquals("ACK_METHOD_NOT_ALLOWED", errorCode(response));
    assertEquals("GET", response.getHeader("Allow"), "a 405 says which methods the path takes");
  }

  @Test
  void oversizedBodyIs413AndStoresNothing() {
    String body = new JsonObject().put("client_id", "c1").put("checkpoint_request_id", "5")
        .put("padding", "x".repeat(20_000)).encode();
    HttpResponse<Buffer> response = app.api().checkpointRequest(token, body);
    assertEquals(413, response.statusCode());
    assertEquals("ACK_PAYLOAD_TOO_LARGE", errorCode(response));
    assertEquals(0, app.sql().checkpointRows());
  }

  @Test
  void nonJsonBodyIs400() {
    HttpResponse<Buffer> response = app.api().checkpointRequest(token, "checkpoint_request_id=5");
    assertEquals(400, response.statusCode());
    assertEquals("ACK_INVALID_JSON", errorCode(response));
  }

  @Test
  void wrongContentTypeIs415() {
    HttpResponse<Buffer> response = ApiClient.send(app.api().request(HttpMethod.POST, "/sync/checkpoint-request")
        .putHeader("Authorization", "Token " + token)
        .putHeader("content-type", "text/plain"), Buffer.buffer("{\"checkpoint_request_id\":\"5\"}"));
    assertEquals(415, response.statusCode());
    assertEquals(0, app.sql().checkpointRows());
  }

  @Test
  void livenessAndReadinessAnswerJson() {
    HttpResponse<Buffer> live = ApiClient.send(app.api().request(HttpMethod.GET, "/probes/liveness"), null);
    assertEquals(200, live.statusCode());
    HttpResponse<Buffer> ready = ApiClient.send(app.api().request(HttpMethod.GET, "/probes/readiness"), null);
    assertEquals(200, ready.statusCode());
    assertEquals(true, data(ready).getBoolean("ready"));
  }

  @Test
  void probesAnswerHeadAsTheyAnswerGetWithoutABody() {
    for (String probe : new String[] {"/probes/liveness", "/probes/readiness", "/probes/startup"}) {
      HttpResponse<Buffer> head = ApiClient.send(app.api().request(HttpMethod.HEAD, probe), null);
      assertEquals(200, head.statusCode(), probe);
      assertNull(head.body(), probe);
      HttpResponse<Buffer> get = ApiClient.send(app.api().request(HttpMethod.GET, probe), null);
      assertEquals(String.valueOf(get.body().length()), head.getHeader("Content-Length"), "GET's header fields: " + probe);
    }
    HttpResponse<Buffer> post = ApiClient.send(app.api().request(HttpMethod.POST, "/probes/liveness"), null);
    assertEquals(405, post.statusCode());
    assertEquals("GET, HEAD", post.getHeader("Allow"));
  }

  @Test
  void metricsArePrometheusTextWithBatchesAndRequests() {
    app.api().writeCheckpoint2(token, "c1");
    HttpResponse<Buffer> response = ApiClient.send(app.api().request(HttpMethod.GET, "/metrics"), null);
    assertEquals(200, response.statusCode());
    String text = response.bodyAsString();
    assertTrue(text.contains("ackpoint_batches_total{outcome=\"ok\"} 1.0"), text);
    assertTrue(text.contains("ackpoint_http_requests_seconds_count{route=\"/write-checkpoint2.json\",status=\"200\"} 1"), text);
    assertTrue(text.contains("ackpoint_batch_requests_count 1"), text);
    assertTrue(text.contains("ackpoint_replication_lag_bytes"), text);
  }

  @Test
  void refusedRequestsAreCountedUnderTheirRoute() {
    app.api().checkpointRequest(token, "{\"client_id\":\"c1\",\"checkpoint_request_id\":\"0\"}");
    app.api().writeCheckpoint2(token, "c\u0000");
    ApiClient.send(app.api().request(HttpMethod.GET, "/no-such-route"), null);
    String text = app.running().metrics();
    assertTrue(text.contains("ackpoint_http_requests_seconds_count{route=\"/sync/checkpoint-request\",status=\"400\"} 1"), text);
    assertTrue(text.contains("ackpoint_http_requests_seconds_count{route=\"/write-checkpoint2.json\",status=\"400\"} 1"), text);
    assertTrue(text.contains("ackpoint_http_requests_seconds_count{route=\"unmatched\",status=\"404\"} 1"), text);
  }

  @Test
  void aRequestWhoseConnectionClosesBeforeAnyAnswerIsCountedAsStatus0NotAsASuccess() throws Exception {
    try (Socket socket = new Socket("127.0.0.1", app.running().port())) {
      socket.getOutputStream().write(("POST /sync/checkpoint-request HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          + "Content-Length: 100\r\n\r\n{\"cl").getBytes(StandardCharsets.US_ASCII));
    }
    String counted = "ackpoint_http_requests_seconds_count{route=\"/sync/checkpoint-request\",status=\"0\"} 1";
    // The server hears of the close on its own event loop, after this thread closed the socket.
    long deadline = System.nanoTime() + 10_000_000_000L;
    String text = app.running().metrics();
    while (!text.contains(counted) && System.nanoTime() < deadline) {
      Thread.sleep(20);
      text = app.running().metrics();
    }
    assertTrue(text.contains(counted), text);
    assertFalse(text.contains("route=\"/sync/checkpoint-request\",status=\"200\""), text);
  }

  @Test
  void aRequestRefusedWhileItsHeadIsReadIsCountedUnmatchedWithItsStatus() throws Exception {
    try (Socket socket = new Socket("127.0.0.1", app.running().port())) {
      socket.getOutputStream().write(("GET /whoami HTTP/1.1\r\nHost: x\r\nX-Big: " + "y".repeat(20 * 1024) + "\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
      assertTrue(answer.startsWith("HTTP/1.1 431"), answer);
    }
    String text = app.running().metrics();
    assertTrue(text.contains("ackpoint_http_requests_seconds_count{route=\"unmatched\",status=\"431\"} 1"), text);
  }

  /** A proxy in front that guards a path by its name (deny /metrics) is not bypassed by another spelling of it. */
  @Test
  void anotherSpellingOfARoutesPathIsAJson404CountedUnmatched() {
    for (String path : new String[] {"//whoami", "/x/../whoami", "/./whoami", "/whoami/", "/%77hoami", "/metrics/", "//metrics"}) {
      HttpResponse<Buffer> response = ApiClient.send(app.api().request(HttpMethod.GET, path).putHeader("Authorization", "Token " + token), null);
      assertEquals(404, response.statusCode(), path + ": " + response.bodyAsString());
      assertEquals("ACK_NOT_FOUND", ApiClient.errorCode(response), path);
    }
    String text = app.running().metrics();
    assertTrue(text.contains("ackpoint_http_requests_seconds_count{route=\"unmatched\",status=\"404\"} 7"), text);
    assertFalse(text.contains("route=\"/whoami\""), text);
  }

  /** RFC 9110, 6.6.1: an origin server with a clock sends Date, on errors too. */
  @Test
  void everyAnswerSaysWhenItWasMade() {
    Instant before = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    List<HttpResponse<Buffer>> answers = List.of(
        ApiClient.send(app.api().request(HttpMethod.GET, "/whoami").putHeader("Authorization", "Token " + token), null),
        ApiClient.send(app.api().request(HttpMethod.GET, "/whoami"), null),
        ApiClient.send(app.api().request(HttpMethod.GET, "/nowhere"), null),
        ApiClient.send(app.api().request(HttpMethod.GET, "/probes/liveness"), null));
    Instant after = Instant.now();
    for (HttpResponse<Buffer> answer : answers) {
      Instant date = ZonedDateTime.parse(answer.getHeader("Date"), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
      assertTrue(!date.isBefore(before) && !date.isAfter(after), answer.getHeader("Date") + " of a " + answer.statusCode());
      assertTrue(answer.getHeader("Date").matches("[A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT"),
          answer.getHeader("Date"));
    }
  }

  @Test
  void whoamiAnswersTheTokensSubject() {
    HttpResponse<Buffer> response = ApiClient.send(app.api().request(HttpMethod.GET, "/whoami").putHeader("Authorization", "Token " + token), null);
    assertEquals("u1", data(response).getString("user_id"));
  }
}
