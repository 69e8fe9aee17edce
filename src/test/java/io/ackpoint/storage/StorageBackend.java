package io.ackpoint.storage;

import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.StoredBatch;
import io.ackpoint.core.WriteOutcome;

import java.time.Instant;
import java.util.List;

/**
 * What the storage contract needs of a backend besides the storage itself: a fresh or older
 * install, and a look at its rows (documents). Also the contract's shared vocabulary.
 */
interface StorageBackend extends AutoCloseable {

  String H1 = "00000000/01000000";
  String H2 = "00000000/02000000";
  String H3 = "00000000/03000000";

  /** A row (document) as the contract looks at it. */
  record Row(long checkpoint, String head, String processedAt, Instant requestedAt) {
  }

  /** A row of an older install, written directly (no unique index stops its duplicates). */
  record Seed(String userId, long checkpoint, String head) {
  }

  CheckpointStorage storage();

  /** The same storage's acknowledgements, as a node that missed their announcement reads them back. */
  AcknowledgementHistory history();

  /** A fresh install: every migration. */
  void migrate();

  /** An older install that already holds {@code seeds}, duplicates included, then migrated. */
  void migrateHolding(List<Seed> seeds);

  /** The row of {@code userId} without a client id (the test made exactly one). */
  Row row(String userId);

  /** The ids of the rows of {@code userId} without a client id, ascending. */
  List<Long> ids(String userId);

  long rows(FullUserId user);

  long rows();

  /** As if replication had passed the row of {@code userId} at {@code position}. */
  void markProcessed(String userId, String position);

  void setRequestedAt(String userId, Instant at);

  @Override
  void close();

  static FullUserId user(String userId) {
    return FullUserId.of(userId, null);
  }

  static CheckpointWrite generated(String userId) {
    return CheckpointWrite.generated(user(userId));
  }

  static CheckpointWrite requested(String userId, long id) {
    return CheckpointWrite.requested(user(userId), id);
  }

  /** The id storage holds for {@code userId} after the batch (what supplied requests are answered). */
  static long checkpoint(StoredBatch batch, String userId) {
    return ((WriteOutcome.Stored) batch.outcomes().get(user(userId))).checkpoint();
  }

  /** The id generated requests of {@code userId} are answered. */
  static long generatedId(StoredBatch batch, String userId) {
    return ((WriteOutcome.Stored) batch.outcomes().get(user(userId))).generated();
  }
}
