package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.vertx.ext.web.RoutingContext;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * Refuses (400) a query string that is not well-formed percent-encoded UTF-8. A lenient decoder turns
 * a stray {@code %} into an exception and every malformed byte sequence into U+FFFD, so that two
 * different client ids would become the same one; after this check, decoding is exact. A parameter
 * that a route reads and that is given twice ({@code ?client_id=a&client_id=b}) is refused too, by
 * {@link #param}: the route would read the first, and whatever reads the request in front of
 * Ackpoint perhaps the last, as with a JSON member named twice. Parameters no route reads are
 * ignored, repeated or not (a proxy's cache buster, a campaign tag).
 *
 * <p>The routes read their parameters through {@link #param}, decoded as a form (WHATWG URL's
 * {@code application/x-www-form-urlencoded}): pairs split at {@code &} only, names compared exactly.
 * Vert.x's own parameters also split at {@code ;} and ignore the case of names, so that
 * {@code ?client_id=x;y} stored a checkpoint for client {@code x}, whose streams are not those of
 * client {@code x;y}.
 */
final class StrictQuery {

  private static final String PARAMETERS = StrictQuery.class.getName();

  private StrictQuery() {
  }

  /** Whether the request's query, if any, is well-formed; if not, it is answered 400. */
  static boolean accepts(RoutingContext ctx) {
    String query = ctx.request().query();
    if (query != null && !wellFormed(query)) {
      Responses.error(ctx.response(), AckpointError.INVALID_QUERY);
      return false;
    }
    return true;
  }

  /** The value of the query parameter {@code name}, null if absent; a 400 if it is given more than once. */
  static String param(RoutingContext ctx, String name) {
    List<String> values = parameters(ctx).get(name);
    if (values == null) {
      return null;
    }
    if (values.size() > 1) {
      throw AckpointError.INVALID_QUERY.exception("query parameter " + name + " is given more than once");
    }
    return values.get(0);
  }

  /** Decoded once per request that has a query, by whichever of the check and the route asks first. */
  private static Map<String, List<String>> parameters(RoutingContext ctx) {
    String query = ctx.request().query();
    if (query == null) {
      return Map.of();
    }
    Map<String, List<String>> parameters = ctx.get(PARAMETERS);
    if (parameters == null) {
      parameters = QueryStringDecoder.builder().hasPath(false).semicolonIsNormalChar(true)
          .maxParams(Integer.MAX_VALUE).charset(StandardCharsets.UTF_8).build(query).parameters();
      ctx.put(PARAMETERS, parameters);
    }
    return parameters;
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
