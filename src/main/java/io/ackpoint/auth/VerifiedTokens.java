package io.ackpoint.auth;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Tokens whose signature and claims were verified, so that a client sending the same token again
 * costs a map lookup instead of a signature check and two JSON parses. Only expiry can change for a
 * verified token, and it is checked on every hit. Bounded (least recently used out) by count and by
 * the characters of the tokens it keeps: a token may be as large as a request's header allows
 * (16 KB), and 10,000 of those, per event loop, were a quarter of a GB kept for nothing but a
 * faster second request. One per event loop, so unsynchronized.
 */
final class VerifiedTokens {

  private final Map<String, AuthenticatedUser> tokens;
  private final int capacity;
  private final long maxChars;
  private long chars;

  VerifiedTokens(int capacity, long maxChars) {
    this.capacity = capacity;
    this.maxChars = maxChars;
    this.tokens = new LinkedHashMap<>(capacity * 4 / 3 + 1, 0.75f, true);
  }

  AuthenticatedUser get(String token) {
    return tokens.get(token);
  }

  void put(String token, AuthenticatedUser user) {
    if (token.length() > maxChars) {
      return;
    }
    if (tokens.put(token, user) == null) {
      chars += token.length();
    }
    while (tokens.size() > capacity || chars > maxChars) {
      Iterator<String> eldest = tokens.keySet().iterator();
      chars -= eldest.next().length();
      eldest.remove();
    }
  }

  /** How many tokens are kept, and how many characters they hold. */
  int size() {
    return tokens.size();
  }

  long chars() {
    return chars;
  }

  void clear() {
    tokens.clear();
    chars = 0;
  }
}
