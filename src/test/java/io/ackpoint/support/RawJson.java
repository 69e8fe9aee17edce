package io.ackpoint.support;

import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;

import java.util.Map;

/**
 * JSON text written by hand, for tokens whose header or claims a JSON library would not produce:
 * numbers in any notation ({@code 1e300}, {@code -0}, 30 digits) and strings holding U+0000 or
 * unpaired surrogates, which only survive UTF-8 as {@code \}{@code uXXXX} escapes.
 */
public final class RawJson {

  /** As a member value in {@link #object}: the member is left out. */
  public static final String ABSENT = "";

  private RawJson() {
  }

  /** A JSON string literal that decodes to exactly {@code s}, whatever its chars. */
  public static String quote(String s) {
    StringBuilder out = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean paired = Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
      if (paired) {
        out.append(c).append(s.charAt(++i));
      } else if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20 || Character.isSurrogate(c)) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.append('"').toString();
  }

  /** The members of {@code base}, with {@code raw} members (JSON text, or {@link #ABSENT}) replacing or adding to them. */
  public static String object(JsonObject base, Map<String, String> raw) {
    StringBuilder out = new StringBuilder("{");
    for (Map.Entry<String, Object> member : base) {
      if (!raw.containsKey(member.getKey())) {
        member(out, member.getKey(), Json.encode(member.getValue()));
      }
    }
    raw.forEach((name, value) -> {
      if (!ABSENT.equals(value)) {
        member(out, name, value);
      }
    });
    return out.append('}').toString();
  }

  private static void member(StringBuilder out, String name, String value) {
    if (out.length() > 1) {
      out.append(',');
    }
    out.append(quote(name)).append(':').append(value);
  }
}
