package io.ackpoint.core;

/**
 * One full user id's share of a batch, already collapsed: whether any of its requests wants a
 * generated id, and the greatest client-supplied id among them ({@code null} when none).
 *
 * <p>Storage applies it as the serial order "generated first, then the supplied id": the generated
 * id is the stored id plus one, whatever the supplied id is; the supplied id then replaces the row's
 * id only if it is greater. Every request of the batch is thus answered as if it ran alone in that
 * order, and no supplied id can hand a generated request an id that is already acknowledged.
 */
public record CheckpointWrite(FullUserId user, boolean generated, Long requestedId) {

  public CheckpointWrite {
    if (!generated && requestedId == null) {
      throw new IllegalArgumentException("a write is generated, supplied, or both");
    }
  }

  public static CheckpointWrite generated(FullUserId user) {
    return new CheckpointWrite(user, true, null);
  }

  public static CheckpointWrite requested(FullUserId user, long id) {
    return new CheckpointWrite(user, false, id);
  }
}
