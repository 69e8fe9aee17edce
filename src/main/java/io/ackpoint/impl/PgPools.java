package io.ackpoint.impl;

import io.ackpoint.config.AckpointConfig.DatabaseConfig;
import io.ackpoint.config.PgUri;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.ClientBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;


/** Connection pools to PostgreSQL, for storage and for the source alike. */
public final class PgPools {

  private static final Logger LOG = LoggerFactory.getLogger(PgPools.class);
  private static volatile boolean warnedCommit;

  /**
   * A 200 says the checkpoint is committed, which needs a commit that waits for its WAL flush: a
   * server configured with {@code synchronous_commit} off is overruled for Ackpoint's own sessions,
   * before their first statement, with {@code local} (the flush, without waiting for standbys that
   * the operator may have configured for others to opt into). Any other setting is the operator's
   * and kept.
   */
  private static final String DURABLE_COMMIT =
      "SELECT set_config('synchronous_commit', 'local', false) WHERE current_setting('synchronous_commit') = 'off'";

  private PgPools() {
  }

  /**
   * A pool with prepared statements cached per connection. Each statement has a connection to
   * itself while it runs (the pool is not a pipelined one).
   *
   * <p>Every round trip is bounded. The server cancels a statement that runs longer than
   * {@code statement_timeout} (a lock held for ever, a stalled disk); a connection that is owed an
   * answer and on which nothing at all arrives for longer than that plus {@code connect_timeout} is
   * closed, failing what it carried, since a live server would have answered by then (if only with
   * the cancellation): that bounds a server that cannot enforce its own timeout (frozen whole, a
   * paused VM, a network that drops packets silently), counted from the socket's connect on. An idle
   * connection stays open; TCP keepalive probes it once it has been idle for a minute. Waiting for a
   * connection of the pool (all busy, or a new one whose start-up the server never answers) ends
   * when one is freed, or fails with an attempt to open one, the waiters in turn (see
   * {@link #poolOptions}); the pool's close waits for the server to hang up on each connection for
   * {@code connect_timeout} at most ({@link BoundedPgDriver}).
   */
  public static Pool create(Vertx vertx, DatabaseConfig database, String name) {
    PgConnectOptions connect = connectOptions(database, name);
    // Sent at connection start-up, so it holds for every statement without a round trip of its own.
    connect.addProperty("statement_timeout", Long.toString(database.statementTimeout().toMillis()));
    // Every statement's reasoning about concurrent batches is READ COMMITTED's (a row changed since the
    // snapshot is re-read once locked; a statement after a lock sees what committed before it):
    // a database whose default is stricter would fail them (40001) or bring back the races.
    connect.addProperty("default_transaction_isolation", "read committed");
    long silence = database.statementTimeout().plus(database.connectTimeout()).toMillis();
    PoolOptions pool = poolOptions(database.poolSize(), name);
    return bounded(vertx, database, silence, pool, connect)
        .withConnectHandler(connection -> connection.query(DURABLE_COMMIT).execute().onComplete(done -> {
          if (done.failed() && !warnedCommit) {
            warnedCommit = true;
            LOG.warn("could not make sure that the commits of {} wait for their WAL flush: {}", name, done.cause().getMessage());
          }
          connection.close();
        }))
        .build();
  }

  /**
   * One connection without statement bounds: schema migrations may legitimately build an index for
   * long. Nor is its start-up bounded, therefore: ask the server with a pool of {@link #create} first.
   */
  public static Pool forMigrations(Vertx vertx, DatabaseConfig database) {
    String name = "ackpoint-migrations";
    return bounded(vertx, database, BoundedPgDriver.NO_SILENCE_LIMIT, poolOptions(1, name), connectOptions(database, name)).build();
  }

  /** A pool's builder on {@link BoundedPgDriver}: its connects and its close's wait bounded by {@code connect_timeout}. */
  private static ClientBuilder<Pool> bounded(Vertx vertx, DatabaseConfig database, long silenceMillis, PoolOptions pool,
                                             PgConnectOptions connect) {
    BoundedPgDriver driver = new BoundedPgDriver((int) database.connectTimeout().toMillis(), silenceMillis);
    return ClientBuilder.pool(driver).with(pool).connectingTo(connect).using(vertx);
  }

  private static PgConnectOptions connectOptions(DatabaseConfig database, String name) {
    PgUri uri = PgUri.parse(database.uri());
    PgConnectOptions connect = uri.connectOptions()
        .setCachePreparedStatements(true)
        // The client caches only statements up to 2048 characters by default; the batch statement is longer.
        .setPreparedStatementCacheSqlLimit(16 * 1024)
        .setPipeliningLimit(256);
    // The client's own default names every session vertx-pg-client: a DBA could not tell Ackpoint's.
    if (!uri.namesApplication()) {
      connect.addProperty("application_name", name);
    }
    return connect;
  }

  /**
   * No timeout of the pool's own on the wait for a connection: in Vert.x 5.0.7 a waiter whose timeout
   * fires while the pool closes is failed twice, and the second failure, thrown from the close's loop
   * over its waiters, left the close (and with it Ackpoint's and Vert.x's) incomplete for good (an
   * embedding application's close after a frozen database; a start on a server that never answers).
   * A wait ends when a connection is freed, or fails when a connection attempt does (each new one is
   * bounded by the connect timeout and the silence limit), one waiter per failed attempt; callers
   * are answered by their own bounds meanwhile (a batch's request timeout, a health check's 2 s),
   * and what they queued runs once the server answers. The queue is bounded for memory's sake alone,
   * far above any burst of Ackpoint's own (every stream that may open at once reads its latest id).
   */
  private static PoolOptions poolOptions(int maxSize, String name) {
    return new PoolOptions().setMaxSize(maxSize).setName(name).setConnectionTimeout(0).setMaxWaitQueueSize(MAX_WAITERS);
  }

  private static final int MAX_WAITERS = 65_536;

  /** {@code uri} without its password, for messages and logs. */
  static String redacted(String uri) {
    return uri.replaceFirst("(://[^:/@]+):[^@/]*@", "$1:***@");
  }

  /** A database failure in one line, with what to do about the usual ones. */
  static String explain(Throwable failure) {
    String message = failure.getMessage() == null ? failure.getClass().getSimpleName() : failure.getMessage();
    if (failure instanceof io.vertx.pgclient.PgException pg && "42501".equals(pg.getSqlState())) {
      return message + " (Ackpoint creates its tables at start-up: its role needs CREATE on the schema public,"
          + " which PostgreSQL 15 and later grant only to the database owner: GRANT CREATE ON SCHEMA public TO the role)";
    }
    return message;
  }
}
