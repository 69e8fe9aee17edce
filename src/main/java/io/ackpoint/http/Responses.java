package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.ackpoint.AckpointException;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/** The JSON envelope of every response: {@code {"data": ...}} or {@code {"error": {...}}}. */
final class Responses {

  static final CharSequence APPLICATION_JSON = HttpHeaders.createOptimized("application/json");

  private Responses() {
  }

  /**
   * The response of {@code ctx} is the last on its connection, which closes once it has been sent.
   * The header tells the client; Vert.x itself keeps a connection open unless the request asked
   * otherwise, so the connection is closed here.
   */
  static void lastOnItsConnection(RoutingContext ctx) {
    HttpConnection connection = ctx.request().connection();
    ctx.response().putHeader(HttpHeaders.CONNECTION, "close");
    ctx.addEndHandler(ended -> connection.close());
  }

  static void data(HttpServerResponse response, JsonObject data) {
    send(response, 200, new JsonObject().put("data", data).encode());
  }

  /** Answers any failure: the catalogue's error it is, or 500 for anything else. */
  static void error(HttpServerResponse response, Throwable failure) {
    AckpointException e = AckpointException.of(failure);
    error(response, e.status(), e.code(), e.description());
  }

  static void error(HttpServerResponse response, AckpointError error, String description) {
    error(response, error.status(), error.code(), description);
  }

  static void error(HttpServerResponse response, AckpointError error) {
    error(response, error.status(), error.code(), error.description());
  }

  private static void error(HttpServerResponse response, int status, String code, String description) {
    if (response.ended() || response.closed()) {
      return;
    }
    if (status == 503 || status == 429) {
      // Unavailable or busy for now, not for good: a PowerSync client retries after this anyway.
      response.putHeader("Retry-After", "1");
    }
    JsonObject error = new JsonObject()
        .put("code", code)
        .put("status", status)
        .put("description", description);
    send(response, status, new JsonObject().put("error", error).encode());
  }

  static void send(HttpServerResponse response, int status, String json) {
    if (response.ended() || response.closed()) {
      return;
    }
    Buffer body = Buffer.buffer(json);
    response.setStatusCode(status)
        .putHeader(HttpHeaders.CONTENT_TYPE, APPLICATION_JSON);
    endWithLength(response, body);
  }

  /**
   * Ends with {@code body} and its length: Vert.x sets Content-Length itself, but not for HEAD,
   * whose answer should carry the header fields of GET's (RFC 9110 section 9.3.2) without the body.
   * A response made chunked already (a stream that fails before its first line) is framed by its
   * chunks alone: a message with both is malformed (RFC 9112 section 6.3).
   */
  static void endWithLength(HttpServerResponse response, Buffer body) {
    if (!response.isChunked()) {
      response.putHeader(HttpHeaders.CONTENT_LENGTH, Integer.toString(body.length()));
    }
    response.end(body);
  }
}
