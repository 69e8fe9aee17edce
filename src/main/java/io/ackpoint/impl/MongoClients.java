package io.ackpoint.impl;

import com.mongodb.MongoClientSettings;
import com.mongodb.event.CommandListener;
import io.ackpoint.config.AckpointConfig.DatabaseConfig;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.mongo.MongoClient;
import io.vertx.ext.mongo.impl.config.MongoClientOptionsParser;

import java.util.UUID;

/**
 * Vert.x Mongo clients, for storage and for the source alike, from a {@code mongodb} database
 * configuration: the URI's options hold, and {@code pool_size}, {@code connect_timeout} and
 * {@code statement_timeout} bound the pool, server selection and each round trip as for PostgreSQL,
 * so that a database that is down fails requests quickly (503) instead of queueing them.
 */
public final class MongoClients {

  private MongoClients() {
  }

  public static MongoClient create(Vertx vertx, DatabaseConfig database) {
    return MongoClient.create(vertx, config(database, database.poolSize(), true));
  }

  /** A client on another database of the same server (the source's {@code local}, for its oplog). */
  public static MongoClient on(Vertx vertx, DatabaseConfig database, String name) {
    return MongoClient.create(vertx, config(database, 1, true).put("db_name", name));
  }

  /** One connection without a bound on round trips: schema migrations may legitimately build an index for long. */
  public static MongoClient forMigrations(Vertx vertx, DatabaseConfig database) {
    return MongoClient.create(vertx, config(database, 1, false));
  }

  /**
   * A client of its own for the change stream, whose command replies go to {@code listener} too.
   * The Vert.x client takes driver settings only whole, so they are the ones it would parse from the
   * same configuration, plus the listener (its parser is the one Vert.x internal used here).
   */
  public static MongoClient withListener(Vertx vertx, DatabaseConfig database, CommandListener listener) {
    JsonObject config = config(database, 2, true);
    MongoClientSettings settings = MongoClientSettings.builder(new MongoClientOptionsParser(vertx, config).settings())
        .addCommandListener(listener)
        .build();
    return MongoClient.createWithMongoSettings(vertx, config, "ackpoint-stream-" + UUID.randomUUID(), settings);
  }

  private static JsonObject config(DatabaseConfig database, int poolSize, boolean bounded) {
    long connect = database.connectTimeout().toMillis();
    JsonObject config = new JsonObject()
        .put("connection_string", database.uri())
        .put("maxPoolSize", poolSize)
        .put("connectTimeoutMS", (int) connect)
        .put("serverSelectionTimeoutMS", connect);
    if (bounded) {
      // No reply for this long: the server would have answered by now (a change stream's getMore
      // waits one second at most), so the connection is given up and what it carried fails.
      config.put("socketTimeoutMS", (int) Math.min(database.statementTimeout().toMillis() + connect, Integer.MAX_VALUE));
    }
    return config;
  }
}
