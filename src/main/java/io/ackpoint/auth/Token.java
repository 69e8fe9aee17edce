package io.ackpoint.auth;

import io.ackpoint.AckpointException;
import io.ackpoint.AckpointError;
import io.ackpoint.core.StrictJson;
import io.ackpoint.core.Utf8;
import io.vertx.core.json.JsonObject;

import java.util.Base64;

/**
 * A JWT in compact serialization, parsed but not verified: its header parameters are of the right
 * JSON type and its claims are well formed (see {@link Claims}). Everything decided here is decided
 * without a key, so a malformed token is refused as such whoever signed it; what the claims mean is
 * checked only once the signature verifies.
 */
record Token(String compact, String alg, String kid, Claims claims) {

  private static final Base64.Decoder BASE64URL = Base64.getUrlDecoder();
  private static final Base64.Encoder BASE64URL_OUT = Base64.getUrlEncoder().withoutPadding();

  /** Parses {@code compact}, or throws an {@link AckpointException} that says what is wrong with it. */
  static Token parse(String compact) {
    String[] parts = compact.split("\\.", -1);
    if (parts.length != 3) {
      throw malformed("a JWT has three dot-separated parts");
    }
    JsonObject header = json(parts[0], "header");
    if (parts[2].isEmpty()) {
      throw "none".equalsIgnoreCase(stringOrNull(header.getValue("alg")))
          ? AckpointError.AUTH_UNSUPPORTED_ALGORITHM.exception( "unsigned tokens (alg none) are not accepted")
          : malformed("the token has no signature");
    }
    String alg = string(header, "alg");
    if (alg == null) {
      throw malformed("header parameter alg is required");
    }
    signature(parts[2], alg);
    String kid = string(header, "kid");
    string(header, "typ");
    if (header.containsKey("crit")) {
      // RFC 7515 section 4.1.11: a token whose header lists extensions the recipient does not
      // understand is invalid, and Ackpoint understands none.
      throw malformed("header parameter crit lists extensions Ackpoint does not support");
    }
    return new Token(compact, alg, kid, Claims.of(json(parts[1], "claims set")));
  }

  /**
   * The JSON object in a base64url segment, in strict UTF-8 and strict JSON: the JSON parser (the
   * signature verifier's too) would read an overlong form as another character, and of two
   * {@code sub} members keep the last, while whatever else reads the token may keep the first.
   */
  private static JsonObject json(String segment, String what) {
    byte[] bytes = canonicalBase64url(segment, what);
    if (!Utf8.isWellFormed(bytes)) {
      throw malformed("the token's " + what + " is not well-formed UTF-8");
    }
    Object value;
    try {
      value = StrictJson.parse(bytes);
    } catch (IllegalArgumentException e) {
      throw malformed("the token's " + what + " " + e.getMessage());
    }
    if (!(value instanceof JsonObject object)) {
      throw malformed("the token's " + what + " is not a base64url-encoded JSON object");
    }
    return object;
  }

  /**
   * The signature's bytes must be written one way only, and have the size of the algorithm's
   * signatures where that is fixed: an ES256 signature is R and S, 32 bytes each (RFC 7518 section
   * 3.4), not the DER encoding that the verifier also takes. Otherwise one token could be sent as
   * several different strings (trailing padding, the unused low bits of the last character, another
   * encoding of the same signature) that all verify, and count, cache and log as different tokens.
   */
  private static void signature(String segment, String alg) {
    byte[] bytes = canonicalBase64url(segment, "signature");
    int expected = switch (alg) {
      case "HS256" -> 32;
      case "ES256" -> 64;
      default -> bytes.length;
    };
    if (bytes.length != expected) {
      throw malformed("an " + alg + " signature has " + expected + " bytes, not " + bytes.length);
    }
  }

  /** The bytes of a base64url segment written the one way RFC 7515 writes it: unpadded, unused bits zero. */
  private static byte[] canonicalBase64url(String segment, String what) {
    byte[] bytes;
    try {
      bytes = BASE64URL.decode(segment);
    } catch (IllegalArgumentException e) {
      throw malformed("the token's " + what + " is not base64url");
    }
    if (!BASE64URL_OUT.encodeToString(bytes).equals(segment)) {
      throw malformed("the token's " + what + " is not base64url as a JWT writes it (no padding, unused bits zero)");
    }
    return bytes;
  }

  /** The string parameter {@code name}, or null when absent; present with another JSON type (null included) is malformed. */
  private static String string(JsonObject header, String name) {
    if (!header.containsKey(name)) {
      return null;
    }
    if (header.getValue(name) instanceof String value) {
      return value;
    }
    throw malformed("header parameter " + name + " must be a string");
  }

  private static String stringOrNull(Object value) {
    return value instanceof String s ? s : null;
  }

  private static AckpointException malformed(String description) {
    return AckpointError.AUTH_MALFORMED.exception( description);
  }
}
