package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Refuses (400) a query string that is not well-formed percent-encoded UTF-8. A lenient decoder turns
 * a stray {@code %} into an exception and every malformed byte sequence into U+FFFD, so that two
 * different client ids would become the same one; after this check, decoding is exact. Refuses a
 * parameter given twice too ({@code ?client_id=a&client_id=b}): the routes would read the first,
 * and whatever reads the request in front of Ackpoint perhaps the last, as with a JSON member named
 * twice.
 */
final class StrictQuery implements Handler<RoutingContext> {

  @Override
  public void handle(RoutingContext ctx) {
    String query = ctx.request().query();
    if (query != null && !wellFormed(query)) {
      Responses.error(ctx.response(), AckpointError.INVALID_QUERY);
      return;
    }
    for (String name : ctx.queryParams().names()) {
      if (ctx.queryParam(name).size() > 1) {
        Responses.error(ctx.response(), AckpointError.INVALID_QUERY, "query parameter " + name + " is given more than once");
        return;
      }
    }
    ctx.next();
  }

  static boolean wellFormed(String query) {
    ByteBuffer bytes = ByteBuffer.allocate(query.length());
    for (int i = 0; i < query.length(); i++) {
      char c = query.charAt(i);
      if (c == '%') {
        if (i + 2 >= query.length() || Character.digit(query.charAt(i + 1), 16) < 0 || Character.digit(query.charAt(i + 2), 16) < 0) {
          return false;
        }
        bytes.put((byte) (Character.digit(query.charAt(i + 1), 16) << 4 | Character.digit(query.charAt(i + 2), 16)));
        i += 2;
      } else if (c > 0x7F) {
        return false; // a request line carries bytes; Netty reads them as ISO-8859-1, not as text
      } else {
        bytes.put((byte) c);
      }
    }
    try {
      StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(bytes.flip());
      return true;
    } catch (CharacterCodingException e) {
      return false;
    }
  }
}
