package io.ackpoint.core;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Strict UTF-8, for JSON that arrives as bytes (request bodies, token segments). The JSON parser
 * decodes overlong forms such as {@code C0 AF} as the character they spell ({@code /}), so two
 * different byte strings would name one user or client; the JDK's decoder refuses them, as well as
 * encoded surrogates and truncated sequences.
 */
public final class Utf8 {

  private Utf8() {
  }

  /** Whether {@code bytes} are well-formed UTF-8 in the shortest form of every character. */
  public static boolean isWellFormed(byte[] bytes) {
    for (byte b : bytes) {
      if (b < 0) {
        return decodes(bytes);
      }
    }
    return true;
  }

  private static boolean decodes(byte[] bytes) {
    try {
      StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes));
      return true;
    } catch (CharacterCodingException e) {
      return false;
    }
  }
}
