package io.ackpoint.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamReadException;

import java.io.IOException;

/**
 * JSON as RFC 8259 has it, for request bodies. Vert.x's parser also takes comments, and keeps one of
 * two members of the same name; a body with two {@code client_id}s names one client to Ackpoint and
 * perhaps the other to a proxy, a gateway or a log reader in front of it. Checked by a walk over the
 * tokens before Vert.x parses the body: comments, duplicate members, anything after the value and
 * any other syntax error are refused.
 */
final class StrictJson {

  private static final JsonFactory FACTORY = JsonFactory.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .build();

  private StrictJson() {
  }

  /** Why {@code bytes} are not one strict JSON value, or {@code null} if they are. */
  static String problem(byte[] bytes) {
    try (JsonParser parser = FACTORY.createParser(bytes)) {
      if (parser.nextToken() == null) {
        return "the request body is empty";
      }
      parser.skipChildren();
      if (parser.nextToken() != null) {
        return "the request body holds more than one JSON value";
      }
      return null;
    } catch (StreamReadException e) {
      String reason = e.getOriginalMessage();
      return reason != null && reason.startsWith("Duplicate field")
          ? "the request body names a member twice: " + reason.substring("Duplicate field ".length())
          : "the request body is not valid JSON";
    } catch (IOException e) {
      return "the request body is not valid JSON";
    }
  }
}
