package io.ackpoint.storage;

/**
 * One full user id's share of a batch: a generated checkpoint ({@code requestedId == null}, the
 * stored id is incremented) or a client-supplied id (stored only if greater than the stored one).
 */
public record CheckpointWrite(String userId, Long requestedId) {

  public static CheckpointWrite generated(String userId) {
    return new CheckpointWrite(userId, null);
  }

  public static CheckpointWrite requested(String userId, long id) {
    return new CheckpointWrite(userId, id);
  }
}
