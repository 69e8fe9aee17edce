package io.ackpoint.source;

import io.ackpoint.config.AckpointConfig.ReplicationConfig;
import io.vertx.pgclient.PgConnectOptions;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * A logical replication stream from PostgreSQL (pgoutput, with logical messages), through PgJDBC's
 * blocking replication API. Every method blocks: use it from a worker thread only.
 *
 * <p>The publication has no tables: the stream then carries only logical messages (the markers), so
 * the checkpoint writes themselves are never decoded and shipped back.
 */
final class PgLogicalStream implements AutoCloseable {

  private final Connection connection;
  private final PGReplicationStream stream;

  private PgLogicalStream(Connection connection, PGReplicationStream stream) {
    this.connection = connection;
    this.stream = stream;
  }

  static PgLogicalStream open(String uri, ReplicationConfig config) throws SQLException {
    PgConnectOptions options = PgConnectOptions.fromUri(uri);
    String url = "jdbc:postgresql://" + options.getHost() + ":" + options.getPort() + "/" + options.getDatabase();
    Properties props = new Properties();
    PGProperty.USER.set(props, options.getUser());
    if (options.getPassword() != null) {
      PGProperty.PASSWORD.set(props, options.getPassword());
    }
    PGProperty.APPLICATION_NAME.set(props, "ackpoint-follower");
    PGProperty.TCP_KEEP_ALIVE.set(props, true);
    PGProperty.CONNECT_TIMEOUT.set(props, 10);
    ensurePublication(url, props, config.publication());

    PGProperty.REPLICATION.set(props, "database");
    PGProperty.ASSUME_MIN_SERVER_VERSION.set(props, "10");
    PGProperty.PREFER_QUERY_MODE.set(props, "simple");
    Connection connection = DriverManager.getConnection(url, props);
    try {
      PGConnection pg = connection.unwrap(PGConnection.class);
      if (!slotExists(connection, config.slotName())) {
        pg.getReplicationAPI().createReplicationSlot().logical()
            .withSlotName(config.slotName())
            .withOutputPlugin("pgoutput")
            .make();
      }
      PGReplicationStream stream = pg.getReplicationAPI().replicationStream().logical()
          .withSlotName(config.slotName())
          .withSlotOption("proto_version", "1")
          .withSlotOption("publication_names", config.publication())
          .withSlotOption("messages", "true")
          .withStatusInterval((int) config.statusInterval().toMillis(), TimeUnit.MILLISECONDS)
          .start();
      return new PgLogicalStream(connection, stream);
    } catch (SQLException | RuntimeException e) {
      connection.close();
      throw e;
    }
  }

  private static void ensurePublication(String url, Properties props, String publication) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, props);
         PreparedStatement exists = c.prepareStatement("SELECT 1 FROM pg_publication WHERE pubname = ?")) {
      exists.setString(1, publication);
      try (ResultSet rs = exists.executeQuery()) {
        if (rs.next()) {
          return;
        }
      }
      try (Statement create = c.createStatement()) {
        // The name is validated by the configuration (a-z, 0-9, _), so it is safe to inline.
        create.execute("CREATE PUBLICATION " + publication);
      } catch (SQLException e) {
        if (!"42710".equals(e.getSQLState())) { // created concurrently by another node
          throw e;
        }
      }
    }
  }

  private static boolean slotExists(Connection connection, String slot) throws SQLException {
    try (Statement s = connection.createStatement();
         ResultSet rs = s.executeQuery("SELECT slot_name FROM pg_replication_slots WHERE slot_name = '" + slot + "'")) {
      return rs.next();
    }
  }

  /**
   * Blocks until the next message and answers its WAL position: everything committed before that
   * position has been streamed. Answers {@code null} once the stream is closed.
   */
  String next() throws SQLException {
    if (stream.read() == null) {
      return null;
    }
    return Lsn.format(stream.getLastReceiveLSN().asLong());
  }

  /**
   * Tells the source the stream was consumed up to {@code position}, so it can recycle the WAL
   * before it. Acknowledgements never need old messages again: any later position acknowledges
   * every head before it.
   */
  void confirm(String position) {
    LogSequenceNumber lsn = LogSequenceNumber.valueOf(Lsn.parse(position));
    stream.setFlushedLSN(lsn);
    stream.setAppliedLSN(lsn);
  }

  /**
   * Drops the connection at once, from any thread, unblocking a {@link #next()} in progress. A
   * graceful close would wait on the reading thread, and a server that is shutting down waits for
   * the client to confirm its last WAL.
   */
  void abort() {
    try {
      connection.abort(Runnable::run);
    } catch (SQLException ignored) {
      // already gone
    }
  }

  @Override
  public void close() {
    try {
      stream.close();
    } catch (SQLException ignored) {
      // the connection is going away anyway
    }
    try {
      connection.close();
    } catch (SQLException ignored) {
      // already broken
    }
  }
}
