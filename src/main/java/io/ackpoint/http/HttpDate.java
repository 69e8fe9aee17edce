package io.ackpoint.http;

import io.netty.handler.codec.DateFormatter;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;

import java.util.Date;

/**
 * The {@code Date} header, which an origin server with a clock must send (RFC 9110, 6.6.1): caches
 * and clients reckon a response's age from it. Formatted once a second, not once a response.
 */
final class HttpDate {

  private record Formatted(long second, String text) {
  }

  private static volatile Formatted latest = new Formatted(-1, "");

  private HttpDate() {
  }

  /**
   * {@code server}'s requests, each with its response stamped before {@code handler} takes it, errors
   * included. Before the router rather than a handler of it: every handler of a router is a step
   * of every request. A router the host mounts is stamped by the host's server, if at all.
   */
  static Handler<HttpServerRequest> stamped(Handler<HttpServerRequest> handler) {
    return request -> {
      request.response().putHeader(HttpHeaders.DATE, now());
      handler.handle(request);
    };
  }

  /** Now, as an IMF-fixdate ({@code Sun, 06 Nov 1994 08:49:37 GMT}). */
  static String now() {
    long millis = System.currentTimeMillis();
    long second = millis / 1000;
    Formatted formatted = latest;
    if (formatted.second() != second) {
      // Racing event loops may each format it: they write the same text.
      formatted = new Formatted(second, DateFormatter.format(new Date(second * 1000)));
      latest = formatted;
    }
    return formatted.text();
  }
}
