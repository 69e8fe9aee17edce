package io.ackpoint.core;

/**
 * A request to create a checkpoint for a full user id: generated ({@code requestedId == null}) or
 * with a client-supplied id.
 */
public record CheckpointCommand(FullUserId user, Long requestedId) {

  public static CheckpointCommand generated(FullUserId user) {
    return new CheckpointCommand(user, null);
  }

  public static CheckpointCommand requested(FullUserId user, long id) {
    return new CheckpointCommand(user, id);
  }

  public boolean isGenerated() {
    return requestedId == null;
  }
}
