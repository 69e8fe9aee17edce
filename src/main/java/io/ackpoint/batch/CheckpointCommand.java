package io.ackpoint.batch;

/**
 * A request to create a checkpoint for a full user id: generated ({@code requestedId == null}) or
 * with a client-supplied id.
 */
public record CheckpointCommand(String fullUserId, Long requestedId) {

  public static CheckpointCommand generated(String fullUserId) {
    return new CheckpointCommand(fullUserId, null);
  }

  public static CheckpointCommand requested(String fullUserId, long id) {
    return new CheckpointCommand(fullUserId, id);
  }
}
