package io.ackpoint.storage;

import io.vertx.sqlclient.Pool;

/**
 * The same contract through {@link PgStatements#STORE_BATCH} alone, the statement of installs without
 * the unique key and of batches in which a user's write is both generated and supplied: on a keyed
 * table most batches take {@link PgStatements#UPSERT_BATCH}, so without this class the older
 * statement would be tried on few of the contract's cases.
 */
class PgStoreBatchStatementTest extends PgCheckpointStorageTest {

  @Override
  PgCheckpointStorage storageOn(Pool pool) {
    return PgCheckpointStorage.withoutUpsert(pool);
  }

  @Override
  boolean upsertsOnKeyedTable() {
    return false;
  }
}
