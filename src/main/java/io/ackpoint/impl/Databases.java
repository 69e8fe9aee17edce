package io.ackpoint.impl;

import io.ackpoint.config.AckpointConfig;
import io.ackpoint.config.AckpointConfig.DatabaseConfig;
import io.ackpoint.config.AckpointConfig.DatabaseType;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.mongo.MongoClient;
import io.vertx.sqlclient.Pool;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * One client per database an Ackpoint uses, shared by every verticle that needs it: a connection
 * pool for PostgreSQL, a Vert.x Mongo client for MongoDB. Storage and source on the same database
 * (the embedded default, and a common case) share one, of the larger of their two
 * {@code pool_size}s and with storage's timeouts; otherwise each has its own. The replication
 * stream holds one more connection (PostgreSQL) or client (MongoDB) of its own.
 */
final class Databases {

  /** The client of one database: a pool or a Mongo client, as its type says. */
  record Client(Pool pool, MongoClient mongo) {

    Future<Void> close() {
      return pool != null ? pool.close() : mongo.close();
    }
  }

  private final Vertx vertx;
  private final DatabaseConfig sourceConfig;
  private final Client storage;
  private final Client source;
  /** Clients made on demand (a MongoDB source's {@code local} database), closed with the rest. */
  private final List<MongoClient> onDemand = new ArrayList<>();

  private Databases(Vertx vertx, DatabaseConfig sourceConfig, Client storage, Client source) {
    this.vertx = vertx;
    this.sourceConfig = sourceConfig;
    this.storage = storage;
    this.source = source;
  }

  static Databases open(Vertx vertx, AckpointConfig config) {
    DatabaseConfig storage = config.storage();
    DatabaseConfig source = config.source();
    if (storage.uri().equals(source.uri()) && isMongo(storage) == isMongo(source)) {
      DatabaseConfig shared = new DatabaseConfig(storage.type(), storage.uri(), Math.max(storage.poolSize(), source.poolSize()),
          storage.connectTimeout(), storage.statementTimeout());
      Client client = client(vertx, shared, "ackpoint");
      return new Databases(vertx, source, client, client);
    }
    return new Databases(vertx, source, client(vertx, storage, "ackpoint-storage"), client(vertx, source, "ackpoint-source"));
  }

  static boolean isMongo(DatabaseConfig database) {
    return database.type() == DatabaseType.MONGODB;
  }

  private static Client client(Vertx vertx, DatabaseConfig database, String name) {
    return isMongo(database) ? new Client(null, MongoClients.create(vertx, database))
        : new Client(PgPools.create(vertx, database, name), null);
  }

  Client storage() {
    return storage;
  }

  Client source() {
    return source;
  }

  /** A client on the MongoDB source's {@code local} database, made on first call. */
  Supplier<MongoClient> sourceLocal() {
    return () -> {
      synchronized (onDemand) {
        if (onDemand.isEmpty()) {
          onDemand.add(MongoClients.on(vertx, sourceConfig, "local"));
        }
        return onDemand.get(0);
      }
    };
  }

  Future<Void> close() {
    List<Future<Void>> closing = new ArrayList<>();
    closing.add(storage.close());
    if (source != storage) {
      closing.add(source.close());
    }
    synchronized (onDemand) {
      onDemand.forEach(c -> closing.add(c.close()));
    }
    return Future.join(closing).mapEmpty();
  }
}
