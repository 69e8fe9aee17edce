package io.ackpoint.impl;

import io.ackpoint.config.AckpointConfig;
import io.ackpoint.config.AckpointConfig.DatabaseConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;

/**
 * One connection pool per database an Ackpoint uses, shared by every verticle that needs it. Storage
 * and source on the same database (the embedded default, and a common case) share one pool, of the
 * larger of their two {@code pool_size}s and with storage's timeouts; otherwise each has its own.
 * The replication stream holds one more connection of its own, outside any pool.
 */
final class Databases {

  private final Pool storage;
  private final Pool source;

  private Databases(Pool storage, Pool source) {
    this.storage = storage;
    this.source = source;
  }

  static Databases open(Vertx vertx, AckpointConfig config) {
    DatabaseConfig storage = config.storage();
    DatabaseConfig source = config.source();
    if (storage.uri().equals(source.uri())) {
      DatabaseConfig shared = new DatabaseConfig(storage.type(), storage.uri(), Math.max(storage.poolSize(), source.poolSize()),
          storage.connectTimeout(), storage.statementTimeout());
      Pool pool = PgPools.create(vertx, shared, "ackpoint");
      return new Databases(pool, pool);
    }
    return new Databases(PgPools.create(vertx, storage, "ackpoint-storage"), PgPools.create(vertx, source, "ackpoint-source"));
  }

  Pool storage() {
    return storage;
  }

  Pool source() {
    return source;
  }

  Future<Void> close() {
    return storage == source ? storage.close() : Future.join(storage.close(), source.close()).mapEmpty();
  }
}
