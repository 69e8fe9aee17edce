package io.ackpoint.core;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamReadException;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.jackson.JacksonCodec;

import java.io.IOException;

/**
 * JSON as RFC 8259 has it, for request bodies and the parts of tokens. Vert.x's parser also takes
 * comments, and keeps one of two members of the same name; a body with two {@code client_id}s, or a
 * token with two {@code sub}s, names one user to Ackpoint and perhaps the other to a proxy, a gateway
 * or a log reader in front of it. Parsed in one pass by Vert.x's own codec, into the same values,
 * over a parser that refuses comments and duplicate members; the codec refuses anything after the
 * value.
 */
public final class StrictJson {

  private static final JsonFactory FACTORY = JsonFactory.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .build();

  private StrictJson() {
  }

  /**
   * The JSON value of {@code bytes} (a {@code JsonObject}, {@code JsonArray}, string, number,
   * boolean or null), or an {@link IllegalArgumentException} whose message says what is wrong, to
   * follow what the bytes are: "names a member twice: 'sub'", "holds more than one JSON value",
   * "is not valid JSON".
   */
  public static Object parse(byte[] bytes) {
    Object value;
    try {
      value = JacksonCodec.fromParser(FACTORY.createParser(bytes), Object.class);
    } catch (IOException e) {
      throw new IllegalArgumentException("is not valid JSON", e);
    } catch (DecodeException e) {
      throw new IllegalArgumentException(reason(e), e);
    }
    return value;
  }

  private static String reason(DecodeException e) {
    if (e.getCause() instanceof StreamReadException read && read.getOriginalMessage() != null
        && read.getOriginalMessage().startsWith("Duplicate field ")) {
      return "names a member twice: " + read.getOriginalMessage().substring("Duplicate field ".length());
    }
    return "Unexpected trailing token".equals(e.getMessage()) ? "holds more than one JSON value" : "is not valid JSON";
  }
}
