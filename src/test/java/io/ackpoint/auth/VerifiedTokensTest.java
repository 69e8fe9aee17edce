package io.ackpoint.auth;

import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The cache of verified tokens is bounded by their number and by their characters, the least recently used out first. */
class VerifiedTokensTest {

  private static final AuthenticatedUser USER = new AuthenticatedUser("u", Instant.EPOCH);

  @Test
  void largeTokensAreKeptWithinTheCharacterBudgetTheLeastRecentlyUsedOut() {
    VerifiedTokens tokens = new VerifiedTokens(100, 10);
    tokens.put("aaaa", USER);
    tokens.put("bbbb", USER);
    tokens.get("aaaa"); // used since: bbbb is the least recently used
    tokens.put("cccc", USER);
    assertNull(tokens.get("bbbb"));
    assertNotNull(tokens.get("aaaa"));
    assertNotNull(tokens.get("cccc"));
    assertEquals(8, tokens.chars());
  }

  @Test
  void aTokenLargerThanTheWholeBudgetIsNotKeptAndTakesNothingOut() {
    VerifiedTokens tokens = new VerifiedTokens(100, 10);
    tokens.put("aaaa", USER);
    tokens.put("x".repeat(11), USER);
    assertNull(tokens.get("x".repeat(11)));
    assertNotNull(tokens.get("aaaa"));
  }

  @Test
  void theNumberOfTokensIsBoundedAndATokenPutAgainCountsOnce() {
    VerifiedTokens tokens = new VerifiedTokens(2, 1_000);
    tokens.put("a", USER);
    tokens.put("a", USER);
    tokens.put("b", USER);
    tokens.put("c", USER);
    assertEquals(2, tokens.size());
    assertEquals(2, tokens.chars());
    assertNull(tokens.get("a"));
  }
}
