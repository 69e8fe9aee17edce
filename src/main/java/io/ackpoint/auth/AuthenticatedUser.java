package io.ackpoint.auth;

import java.time.Instant;

/** The verified identity of a request: the JWT {@code sub} and when the token stops being valid. */
public record AuthenticatedUser(String userId, Instant expiresAt) {
}
