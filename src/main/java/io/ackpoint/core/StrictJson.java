package io.ackpoint.core;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamReadException;

import java.io.IOException;

/**
 * JSON as RFC 8259 has it, for request bodies and the parts of tokens. Vert.x's parser also takes
 * comments, and keeps one of two members of the same name; a body with two {@code client_id}s, or a
 * token with two {@code sub}s, names one user to Ackpoint and perhaps the other to a proxy, a gateway
 * or a log reader in front of it. Checked by a walk over the tokens before Vert.x parses the text:
 * comments, duplicate members, anything after the value and any other syntax error are refused.
 */
public final class StrictJson {

  private static final JsonFactory FACTORY = JsonFactory.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .build();

  private StrictJson() {
  }

  /**
   * Why {@code bytes} are not one strict JSON value ("is empty", "names a member twice: 'sub'"…, to
   * follow what they are), or {@code null} if they are.
   */
  public static String problem(byte[] bytes) {
    try (JsonParser parser = FACTORY.createParser(bytes)) {
      if (parser.nextToken() == null) {
        return "is empty";
      }
      parser.skipChildren();
      if (parser.nextToken() != null) {
        return "holds more than one JSON value";
      }
      return null;
    } catch (StreamReadException e) {
      String reason = e.getOriginalMessage();
      return reason != null && reason.startsWith("Duplicate field")
          ? "names a member twice: " + reason.substring("Duplicate field ".length())
          : "is not valid JSON";
    } catch (IOException e) {
      return "is not valid JSON";
    }
  }
}
