package io.ackpoint.http;

import io.ackpoint.support.Await;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HexFormat;

import static io.ackpoint.support.ApiClient.errorCode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SPEC section 2: every rejected form of checkpoint_request_id and client_id is a 400 that stores nothing. */
@ExtendWith(VertxExtension.class)
class CheckpointRequestValidationTest {

  private static Vertx vertx;
  private static RunningAckpoint app;
  private static ApiClient api;
  private static Sql sql;
  private static String token;

  @BeforeAll
  static void start() {
    vertx = Vertx.vertx();
    app = RunningAckpoint.fresh(vertx, config -> config);
    api = app.api;
    sql = app.sql;
    token = TestKeys.token(vertx, "validator");
  }

  @AfterAll
  static void stop() {
    app.close();
    Await.result(vertx.close());
  }

  @ParameterizedTest(name = "checkpoint_request_id: {0}")
  @ValueSource(strings = {
      "\"0\"", "0", "-1", "\"-1\"", "\"9223372036854775808\"", "\"99999999999999999999\"", "\"00000000000000000000000\"",
      "\"00009223372036854775808\"",
      "9007199254740992", "9223372036854775807", "1.5", "1.0", "\"1.5\"", "1e3", "\"1e3\"", "\"+5\"", "\" 5\"",
      "\"5 \"", "\"\"", "\"0x10\"", "true", "false", "null", "[5]", "{\"id\":5}", "\"٣\"", "-0"})
  void rejectedCheckpointRequestIdIs400AndStoresNothing(String id) {
    HttpResponse<Buffer> response = api.checkpointRequest(token,
        "{\"client_id\":\"c1\",\"checkpoint_request_id\":" + id + "}");
    assertEquals(400, response.statusCode(), response.bodyAsString());
    assertEquals("ACK_INVALID_CHECKPOINT_REQUEST_ID", errorCode(response));
    assertEquals(0, sql.checkpointRows());
  }

  @ParameterizedTest(name = "body: {0}")
  @ValueSource(strings = {"{\"client_id\":\"c1\"}", "[]", "\"5\"", "5", "{", "", "{\"checkpoint_request_id\":\"5\",}"})
  void bodyWithoutAnIdOrNotAnObjectIs400(String body) {
    HttpResponse<Buffer> response = api.checkpointRequest(token, body);
    assertEquals(400, response.statusCode(), response.bodyAsString());
    assertEquals(0, sql.checkpointRows());
  }

  /** Overlong forms (C0 AF and E0 80 AF spell "/"), an encoded surrogate, a byte never in UTF-8, a truncated sequence. */
  @ParameterizedTest(name = "client_id bytes: {0}")
  @ValueSource(strings = {"c0af", "e080af", "eda080", "ff", "c3"})
  void aBodyThatIsNotWellFormedUtf8Is400AndStoresNothing(String hex) {
    Buffer body = Buffer.buffer("{\"client_id\":\"").appendBytes(HexFormat.of().parseHex(hex))
        .appendString("\",\"checkpoint_request_id\":\"50\"}");
    HttpResponse<Buffer> response = ApiClient.send(api.request(HttpMethod.POST, "/sync/checkpoint-request")
        .putHeader("Authorization", "Token " + token).putHeader("content-type", "application/json"), body);
    assertEquals(400, response.statusCode(), response.bodyAsString());
    assertEquals("ACK_INVALID_JSON", errorCode(response));
    assertEquals(0, sql.checkpointRows());
  }

  /** JSON as RFC 8259 has it: no comments, no member twice (which of two client ids would be meant?), one value. */
  @ParameterizedTest(name = "body: {0}")
  @ValueSource(strings = {
      "{\"client_id\":\"c\", /* note */ \"checkpoint_request_id\":\"50\"}",
      "{\"client_id\":\"c\",\"checkpoint_request_id\":\"50\"} // note",
      "{\"client_id\":\"c\",\"client_id\":\"d\",\"checkpoint_request_id\":\"50\"}",
      "{\"client_id\":\"c\",\"checkpoint_request_id\":\"50\"} {}"})
  void aBodyThatIsNotStrictlyJsonIs400AndStoresNothing(String body) {
    HttpResponse<Buffer> response = api.checkpointRequest(token, body);
    assertEquals(400, response.statusCode(), response.bodyAsString());
    assertEquals("ACK_INVALID_JSON", errorCode(response));
    assertEquals(0, sql.checkpointRows());
  }

  @ParameterizedTest(name = "wait={0}")
  @ValueSource(strings = {"-1", "1.5", "ten", "1e3", "99999999999999999999"})
  void aWaitThatIsNotAWholeNumberOfSecondsWithinTheLimitIs400AndStoresNothing(String wait) {
    HttpResponse<Buffer> response = ApiClient.send(api.request(HttpMethod.POST, "/sync/checkpoint-request?wait=" + wait)
        .putHeader("Authorization", "Token " + token).putHeader("content-type", "application/json"),
        Buffer.buffer("{\"client_id\":\"c\",\"checkpoint_request_id\":\"50\"}"));
    assertEquals(400, response.statusCode(), response.bodyAsString());
    assertEquals("ACK_INVALID_WAIT", errorCode(response));
    if (wait.length() > 6) {
      assertTrue(response.bodyAsString().contains("at most"), response.bodyAsString());
    }
    assertEquals(0, sql.checkpointRows());
  }

  @ParameterizedTest(name = "client_id: {0}")
  @ValueSource(strings = {"5", "true", "[\"c\"]", "{}", "\"a\\u0000b\"", "\"line\\nbreak\"", "\"tab\\there\""})
  void rejectedClientIdIs400AndStoresNothing(String clientId) {
    HttpResponse<Buffer> response = api.checkpointRequest(token,
        "{\"client_id\":" + clientId + ",\"checkpoint_request_id\":\"5\"}");
    assertEquals(400, response.statusCode(), response.bodyAsString());
    assertEquals("ACK_INVALID_CLIENT_ID", errorCode(response));
    assertEquals(0, sql.checkpointRows());
  }

  @org.junit.jupiter.api.Test
  void clientIdLongerThan256CharactersIs400() {
    assertEquals(400, api.checkpointRequest(token, "x".repeat(257), "5").statusCode());
    assertEquals(400, api.writeCheckpoint2(token, "x".repeat(257)).statusCode());
    assertEquals(0, sql.checkpointRows());
  }
}
