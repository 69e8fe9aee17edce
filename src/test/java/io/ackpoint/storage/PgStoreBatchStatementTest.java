package io.ackpoint.storage;

import io.vertx.sqlclient.Pool;

/**
 * The same contract through {@link PgStatements#STORE_BATCH}, the statement of installs without the
 * unique key: on a keyed table every batch takes {@link PgStatements#UPSERT_BATCH}, so without this
 * class the older statement would be tried only on the contract's cases of duplicate rows.
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
