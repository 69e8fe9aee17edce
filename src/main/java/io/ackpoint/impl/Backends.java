package io.ackpoint.impl;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.AckpointError;
import io.ackpoint.config.AckpointConfig;
import io.ackpoint.config.AckpointConfig.CheckpointMode;
import io.ackpoint.source.ChangeStreamFollowerVerticle;
import io.ackpoint.source.MongoReplicationSource;
import io.ackpoint.source.PgReplicationSource;
import io.ackpoint.source.ReplicationFollowerVerticle;
import io.ackpoint.source.ReplicationListener;
import io.ackpoint.source.ReplicationSource;
import io.ackpoint.source.SlotState;
import io.ackpoint.storage.AcknowledgementHistory;
import io.ackpoint.storage.CheckpointStorage;
import io.ackpoint.storage.HeadStoringWriter;
import io.ackpoint.storage.MongoAcknowledgementHistory;
import io.ackpoint.storage.PgAcknowledgementHistory;
import io.ackpoint.storage.MongoCheckpointStorage;
import io.ackpoint.storage.MongoMigrations;
import io.ackpoint.storage.PgCheckpointStorage;
import io.ackpoint.storage.PgMigrations;
import io.vertx.core.Deployable;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.mongo.MongoClient;
import io.vertx.sqlclient.Pool;

import java.util.function.Supplier;

import static io.ackpoint.impl.Databases.isMongo;

/**
 * Which implementation serves each database type: storage, source, its follower and the schema
 * migrations. Any pairing works, since positions are canonical strings both storages compare alike.
 */
final class Backends {

  private Backends() {
  }

  static CheckpointStorage storage(AckpointConfig config, Databases databases) {
    return isMongo(config.storage()) ? new MongoCheckpointStorage(databases.storage().mongo())
        : new PgCheckpointStorage(databases.storage().pool());
  }

  /**
   * Storage's one-round-trip writer (head, rows and marker, committed together) when source and
   * storage are one PostgreSQL database, which then share one pool; else null.
   */
  static HeadStoringWriter oneRoundTrip(Databases databases, CheckpointStorage storage, ReplicationSource source) {
    if (databases.source() != databases.storage() || !(storage instanceof PgCheckpointStorage pg)
        || !(source instanceof PgReplicationSource)) {
      return null;
    }
    return pg.atCurrentHeadMarkedWithin(PgReplicationSource.MARKER_IN_TRANSACTION);
  }

  static AcknowledgementHistory history(AckpointConfig config, Databases databases) {
    return isMongo(config.storage()) ? new MongoAcknowledgementHistory(databases.storage().mongo())
        : new PgAcknowledgementHistory(databases.storage().pool());
  }

  static ReplicationSource source(AckpointConfig config, Databases databases) {
    return isMongo(config.source()) ? new MongoReplicationSource(databases.source().mongo(), databases.sourceLocal())
        : new PgReplicationSource(databases.source().pool());
  }

  /** The built-in follower of the source's replication stream. */
  static Deployable follower(Vertx vertx, AckpointConfig config, ReplicationSource source, AckpointAddresses addresses,
                             ReplicationListener listener) {
    if (isMongo(config.source())) {
      return new ChangeStreamFollowerVerticle(commands -> MongoClients.withListener(vertx, config.source(), commands),
          config.replication(), source, addresses, listener);
    }
    return new ReplicationFollowerVerticle(config.source().uri(), config.replication(),
        config.checkpoints().mode() == CheckpointMode.CUSTOM ? config.checkpoints().custom() : null,
        (PgReplicationSource) source, addresses, listener);
  }

  /** The replication slot as the source sees it, for the status route; null when the source has no slot (MongoDB). */
  static Supplier<Future<SlotState>> slotState(ReplicationSource source, String slot) {
    return source instanceof PgReplicationSource pg ? () -> pg.slotState(slot) : null;
  }

  /** Schema migrations run once per start, before any verticle touches storage, on a client of their own. */
  static Future<Void> migrate(Vertx vertx, AckpointConfig config) {
    Future<?> migrated;
    if (isMongo(config.storage())) {
      MongoClient client = MongoClients.forMigrations(vertx, config.storage());
      migrated = MongoMigrations.migrate(client).eventually(client::close);
    } else {
      // The migrations' connection bounds nothing (an index build may take long), the start-up of a
      // connection included: a server that accepts connections and never answers held the start until
      // its limit, saying nothing of storage. A bounded pool asks first whether the server answers.
      Pool answering = PgPools.create(vertx, config.storage(), "ackpoint-migrations");
      migrated = answering.query("SELECT 1").execute().eventually(answering::close).compose(answered -> {
        Pool pool = PgPools.forMigrations(vertx, config.storage());
        return PgMigrations.migrate(pool).eventually(pool::close);
      });
    }
    return migrated.recover(e -> Future.failedFuture(AckpointError.STORAGE_UNAVAILABLE.exception("storage at "
        + PgPools.redacted(config.storage().uri()) + " (storage.uri) could not be prepared: " + PgPools.explain(e)))).mapEmpty();
  }
}
