package io.ackpoint.core;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Whose checkpoint: the JWT {@code sub} and the client id, kept apart. Two different pairs never
 * share anything; in particular sub {@code a/b} without a client id is not sub {@code a} with client
 * {@code b}. An empty client id is the same as none.
 *
 * <p>Both parts are strings every storage can hold exactly: no U+0000, no unpaired surrogate (which
 * UTF-8 encoders replace by {@code ?}, merging different ids), and short enough to fit an index entry.
 */
public record FullUserId(String userId, String clientId) {

  public static final int MAX_USER_ID_UTF8_BYTES = 1024;
  public static final int MAX_CLIENT_ID_LENGTH = 256;

  public FullUserId {
    Objects.requireNonNull(userId, "userId");
    clientId = clientId == null ? "" : clientId;
    String problem = userIdProblem(userId);
    if (problem == null) {
      problem = clientIdProblem(clientId);
    }
    if (problem != null) {
      throw new IllegalArgumentException(problem);
    }
  }

  public static FullUserId of(String userId, String clientId) {
    return new FullUserId(userId, clientId);
  }

  public boolean hasClientId() {
    return !clientId.isEmpty();
  }

  /** The client id, or {@code null} when there is none (for JSON bodies that omit it). */
  public String clientIdOrNull() {
    return clientId.isEmpty() ? null : clientId;
  }

  /** Why {@code userId} cannot be a user id, or {@code null} when it can. */
  public static String userIdProblem(String userId) {
    if (userId.isEmpty()) {
      return "must be a non-empty string";
    }
    if (userId.length() > MAX_USER_ID_UTF8_BYTES || userId.getBytes(StandardCharsets.UTF_8).length > MAX_USER_ID_UTF8_BYTES) {
      return "must be at most " + MAX_USER_ID_UTF8_BYTES + " bytes of UTF-8";
    }
    return characterProblem(userId, false);
  }

  /** Why {@code clientId} cannot be a client id, or {@code null} when it can. */
  public static String clientIdProblem(String clientId) {
    if (clientId.length() > MAX_CLIENT_ID_LENGTH) {
      return "must be at most " + MAX_CLIENT_ID_LENGTH + " characters";
    }
    return characterProblem(clientId, true);
  }

  private static String characterProblem(String s, boolean noControlCharacters) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == 0) {
        return "must not contain U+0000";
      }
      if (noControlCharacters && Character.isISOControl(c)) {
        return "must not contain control characters";
      }
      if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return "must not contain an unpaired UTF-16 surrogate";
      }
    }
    return null;
  }

  @Override
  public String toString() {
    return clientId.isEmpty() ? userId : userId + " (client " + clientId + ")";
  }
}
