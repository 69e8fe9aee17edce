package io.ackpoint.http;

import io.netty.handler.codec.DateFormatter;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;

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

  /** Stamps the response of every request the router takes, including its errors. */
  static void stamp(RoutingContext ctx) {
    ctx.response().putHeader(HttpHeaders.DATE, now());
    ctx.next();
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
