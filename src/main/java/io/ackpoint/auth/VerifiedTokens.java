package io.ackpoint.auth;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Tokens whose signature and claims were verified, so that a client sending the same token again
 * costs a map lookup instead of a signature check and two JSON parses. Only expiry can change for a
 * verified token, and it is checked on every hit. Bounded (least recently used out); one per event
 * loop, so unsynchronized.
 */
final class VerifiedTokens {

  private final Map<String, AuthenticatedUser> tokens;

  VerifiedTokens(int capacity) {
    this.tokens = new LinkedHashMap<>(capacity * 4 / 3 + 1, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, AuthenticatedUser> eldest) {
        return size() > capacity;
      }
    };
  }

  AuthenticatedUser get(String token) {
    return tokens.get(token);
  }

  void put(String token, AuthenticatedUser user) {
    tokens.put(token, user);
  }

  void clear() {
    tokens.clear();
  }
}
