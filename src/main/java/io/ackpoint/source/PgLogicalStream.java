package io.ackpoint.source;

import io.ackpoint.core.CustomCheckpoint;
import io.ackpoint.config.AckpointConfig.CustomTable;
import io.ackpoint.config.AckpointConfig.ReplicationConfig;
import io.ackpoint.config.PgUri;
import io.vertx.pgclient.PgConnectOptions;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * A logical replication stream from PostgreSQL (pgoutput, with logical messages), through PgJDBC's
 * blocking replication API. Every method blocks: use it from a worker thread only.
 *
 * <p>In managed mode the publication has no tables: the stream then carries only logical messages
 * (the markers), so the checkpoint writes themselves are never decoded and shipped back. In custom
 * mode it carries the custom checkpoint table as well.
 *
 * <p>Invariant: no position is confirmed to the source (by {@link #confirm} or by the idle
 * confirmation) before every custom checkpoint committed before it is durably stored. Custom rows
 * are handed out one committed transaction at a time, and the stream reads on only once the
 * follower has confirmed their position, which it does after storing them; the idle confirmation
 * never runs inside a transaction nor while handed-out rows are unconfirmed. Whatever was not
 * confirmed is sent again by the slot on the next connection.
 */
final class PgLogicalStream implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(PgLogicalStream.class);

  /** What one message showed: a position, and the custom checkpoints committed at it (usually none). */
  record Observed(String position, List<CustomCheckpoint> custom) {
  }

  /** Opens the stream's connections: {@link DriverManager} itself, or one that a stop can reach. */
  @FunctionalInterface
  interface Connector {
    Connection connect(String url, Properties props) throws SQLException;
  }

  private static final long MAX_IDLE_TICK_MILLIS = 10_000;
  /** The message type of CommandComplete. */
  private static final int COMMAND_COMPLETE = 'C';

  private final Connection connection;
  private final PGReplicationStream stream;
  private final ReadWait idle;
  private final QuietStatus status;
  private final PgOutputDecoder decoder;
  private final long silenceLimitNanos;
  /**
   * An idle stream sleeps on its socket until the status update is due (every status interval) and
   * checks for silence then (at most {@link #MAX_IDLE_TICK_MILLIS} late). Data wakes it at once (a
   * server's keepalive too, so an idle confirmation is never late for a server that shuts down), and
   * so does an abort, which closes the socket. Waking this seldom keeps an idle follower's thread
   * nearly always asleep.
   */
  private final long statusIntervalNanos;
  /** When this stream last sent a status update itself (PgJDBC sends its own from its reads, unseen: one more does no harm). */
  private long lastStatusNanos = System.nanoTime();
  private long confirmed;
  /** The commit position of custom checkpoints handed out by {@link #next()} and not yet confirmed; null when none. */
  private String unconfirmedCustom;
  /** When a byte last arrived: a message, or a keepalive (which PgJDBC consumes without showing it). */
  private long lastMessageNanos = System.nanoTime();
  private long lastReplyRequestNanos = System.nanoTime();
  private volatile boolean aborted;
  /** Whether reading or writing the connection failed: {@link #close} then drops it without a goodbye. */
  private boolean broken;
  private final String headAtOpen;

  private PgLogicalStream(Connection connection, PGReplicationStream stream, PgOutputDecoder decoder, Duration silenceLimit,
                          Duration statusInterval, String headAtOpen) {
    this.headAtOpen = headAtOpen;
    this.connection = connection;
    this.statusIntervalNanos = statusInterval.toNanos();
    this.stream = stream;
    this.idle = ReadWait.on(connection);
    this.status = new QuietStatus(stream);
    this.decoder = decoder;
    this.silenceLimitNanos = silenceLimit.toNanos();
  }

  /**
   * Opens the stream; with a {@code customTable}, its rows are published and decoded too (custom
   * checkpoint mode), else the publication stays empty.
   */
  static PgLogicalStream open(String uri, ReplicationConfig config, CustomTable customTable) throws SQLException {
    return open(uri, config, customTable, silenceLimit(config), DriverManager::getConnection, false);
  }

  /** Like {@link #open(String, ReplicationConfig, CustomTable)}, its connections opened by {@code connector}. */
  static PgLogicalStream open(String uri, ReplicationConfig config, CustomTable customTable, Connector connector)
      throws SQLException {
    return open(uri, config, customTable, silenceLimit(config), connector, false);
  }

  /**
   * Like {@link #open(String, ReplicationConfig, CustomTable, Connector)}, the slot dropped first and
   * created again at the present: for generated checkpoints only, whose slot can no longer decode on
   * (see {@link ReplicationFailures#publicationDropped}).
   */
  static PgLogicalStream openOnANewSlot(String uri, ReplicationConfig config, Connector connector) throws SQLException {
    return open(uri, config, null, silenceLimit(config), connector, true);
  }

  /**
   * Opens the stream, presumed dead after {@code silenceLimit} without a byte (or the server's
   * wal_sender_timeout, if longer: a walsender busy decoding answers at most that often).
   */
  static PgLogicalStream open(String uri, ReplicationConfig config, CustomTable customTable, Duration silenceLimit)
      throws SQLException {
    return open(uri, config, customTable, silenceLimit, DriverManager::getConnection, false);
  }

  private static PgLogicalStream open(String uri, ReplicationConfig config, CustomTable customTable, Duration silenceLimit,
                                      Connector connector, boolean newSlot) throws SQLException {
    PgUri parsed = PgUri.parse(uri);
    PgConnectOptions options = parsed.connectOptions();
    String url = "jdbc:postgresql://" + options.getHost() + ":" + options.getPort() + "/" + options.getDatabase();
    Properties props = new Properties();
    PGProperty.USER.set(props, options.getUser());
    if (options.getPassword() != null) {
      PGProperty.PASSWORD.set(props, options.getPassword());
    }
    PGProperty.APPLICATION_NAME.set(props, "ackpoint-follower");
    // The URI's TLS for this connection too, as for the pools'.
    PGProperty.SSL_MODE.set(props, parsed.jdbcSslMode());
    if (parsed.rootCert() != null) {
      PGProperty.SSL_ROOT_CERT.set(props, parsed.rootCert());
    }
    PGProperty.TCP_KEEP_ALIVE.set(props, true);
    PGProperty.CONNECT_TIMEOUT.set(props, 10);
    // With a login timeout PgJDBC opens the connection on a thread of its own and waits for it
    // interruptibly, so a stop reaches a follower that is connecting. Generous: it bounds the whole
    // login (TLS, authentication by a loaded server), where each read had the read timeout before.
    PGProperty.LOGIN_TIMEOUT.set(props, 30);
    // A silently dead connection must not stall acknowledgements: the server sends keepalives and
    // the heartbeat marker moves the stream, so a read that sees nothing for this long means the
    // connection is gone, and the follower reconnects.
    readTimeout(props, silenceLimit);
    Duration silence;
    String head;
    Connection c = connector.connect(url, props);
    try {
      Publication.ensure(c, config.publication(), customTable);
      silence = max(silenceLimit, walSenderTimeout(c));
      head = currentHead(c);
    } catch (SQLException | RuntimeException e) {
      discard(c, e);
      throw e;
    }
    c.close();
    readTimeout(props, silence);

    PGProperty.REPLICATION.set(props, "database");
    PGProperty.ASSUME_MIN_SERVER_VERSION.set(props, "10");
    PGProperty.PREFER_QUERY_MODE.set(props, "simple");
    Connection connection = connector.connect(url, props);
    try {
      PGConnection pg = connection.unwrap(PGConnection.class);
      if (newSlot && dropInactive(connection, config.slotName(), "true")) {
        LOG.warn("replication slot {} dropped and created again: it could not decode past the moment its publication {}"
            + " was dropped; the marker written after this reconnect acknowledges what is pending",
            config.slotName(), config.publication());
      }
      if (customTable == null && dropIfInvalidated(connection, config.slotName())) {
        LOG.warn("replication slot {} was invalidated by the source (it held back more WAL than max_slot_wal_keep_size"
            + " allows): dropped and created again; the marker written after this reconnect acknowledges what is pending",
            config.slotName());
      }
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
      return new PgLogicalStream(connection, stream, new PgOutputDecoder(customTable), silence, config.statusInterval(), head);
    } catch (SQLException | RuntimeException e) {
      discard(connection, e);
      throw e;
    }
  }

  /**
   * Closes a connection that opening the stream failed on; one that failed as a connection (SQLSTATE
   * class 08: the server ended it, the network cut it) is dropped without a goodbye, which could
   * not be sent and would leave its socket open (see {@link #close}).
   */
  private static void discard(Connection connection, Exception failure) {
    try {
      if (failure instanceof SQLException sql && sql.getSQLState() != null && sql.getSQLState().startsWith("08")) {
        connection.abort(Runnable::run);
      } else {
        connection.close();
      }
    } catch (SQLException closing) {
      failure.addSuppressed(closing);
    }
  }

  /** The heartbeat marker moves the stream at least this often; silence beyond means a dead connection. */
  private static Duration silenceLimit(ReplicationConfig config) {
    return Duration.ofSeconds(Math.max(60, config.heartbeatInterval().toSeconds() * 3));
  }

  private static void readTimeout(Properties props, Duration timeout) {
    PGProperty.SOCKET_TIMEOUT.set(props, (int) Math.max(1, timeout.toSeconds()));
  }

  /** The server's wal_sender_timeout (0 when disabled). */
  private static Duration walSenderTimeout(Connection connection) throws SQLException {
    try (Statement s = connection.createStatement();
         ResultSet rs = s.executeQuery("SELECT setting::bigint FROM pg_settings WHERE name = 'wal_sender_timeout'")) {
      return Duration.ofMillis(rs.next() ? Math.max(0, rs.getLong(1)) : 0);
    }
  }

  private static String currentHead(Connection connection) throws SQLException {
    try (Statement s = connection.createStatement();
         ResultSet rs = s.executeQuery(PgReplicationSource.READ_HEAD)) {
      rs.next();
      return Lsn.format(rs.getString(1));
    }
  }

  /**
   * The source's head as the stream was opened: every position observed before, on the same source,
   * is at or before it (see {@code AckEngineVerticle}, for a source that went back).
   */
  String headAtOpen() {
    return headAtOpen;
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  /**
   * A slot the source invalidated (its WAL was removed: {@code wal_status} lost) can never stream
   * again; only a new slot can. With generated checkpoints the slot carries nothing but Ackpoint's
   * markers, and a marker follows every reconnect, so a new slot loses nothing: every pending
   * checkpoint's head is before that marker. Not in custom mode, where the lost WAL held the
   * application's checkpoints: an operator decides there (readiness says why).
   */
  private static boolean dropIfInvalidated(Connection connection, String slot) throws SQLException {
    // wal_status read through to_jsonb: the column exists from PostgreSQL 13 on.
    return dropInactive(connection, slot, "to_jsonb(r) ->> 'wal_status' = 'lost'");
  }

  /** Drops the slot if no process streams from it and {@code condition} holds of its row {@code r} of pg_replication_slots. */
  private static boolean dropInactive(Connection connection, String slot, String condition) throws SQLException {
    try (PreparedStatement s = connection.prepareStatement("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots r"
        + " WHERE slot_name = ? AND NOT active AND " + condition)) {
      s.setString(1, slot);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next();
      }
    }
  }

  /**
   * Whether the slot exists; one made by another program for another output plugin is refused with a
   * reason that says so (its stream would fail on an option that plugin does not know).
   */
  private static boolean slotExists(Connection connection, String slot) throws SQLException {
    try (PreparedStatement s = connection.prepareStatement("SELECT plugin FROM pg_replication_slots WHERE slot_name = ?")) {
      s.setString(1, slot);
      try (ResultSet rs = s.executeQuery()) {
        if (!rs.next()) {
          return false;
        }
        String plugin = rs.getString(1);
        if (!"pgoutput".equals(plugin)) {
          throw new FollowerFailure("replication slot \"" + slot + "\" is another program's: it decodes with "
              + (plugin == null ? "no output plugin (a physical slot)" : "the output plugin " + plugin) + ", not pgoutput"
              + " (give Ackpoint its own replication.slot_name, or drop that slot if nothing uses it)");
        }
        return true;
      }
    }
  }

  /**
   * Blocks until the next position and answers it: everything committed before that position has
   * been streamed. In custom mode a transaction's messages are not positions of their own; its
   * commit is, with the custom checkpoints it carried, which the caller must store before it
   * confirms that position, and before it reads on. Answers {@code null} once the stream is closed.
   */
  Observed next() throws SQLException {
    if (unconfirmedCustom != null) {
      throw new IllegalStateException("the custom checkpoints committed at " + unconfirmedCustom
          + " must be stored and their position confirmed before the stream reads on");
    }
    ByteBuffer message;
    while ((message = readOnce()) != null) {
      String received = Lsn.format(stream.getLastReceiveLSN().asLong());
      PgOutputDecoder.Committed committed = decoder.decode(message);
      if (committed != null) {
        unconfirmedCustom = committed.position();
        return new Observed(committed.position(), committed.checkpoints());
      }
      if (!decoder.inTransaction()) {
        return new Observed(received, List.of());
      }
      // Inside a transaction: its position is its commit's, once its rows are known. A batch's
      // transactional marker thus gives one position, not three (begin, message, commit).
    }
    return null;
  }

  /** {@link #read}, marking the connection broken when it fails. */
  private ByteBuffer readOnce() throws SQLException {
    try {
      return read();
    } catch (SQLException e) {
      broken = true;
      throw e;
    }
  }

  /**
   * Blocks until the next message; {@code null} once the stream is closed. On the socket, waits for a
   * byte before it asks PgJDBC for a message: PgJDBC's non-blocking read, on a stream that has caught
   * up, waits 1 ms on the socket and throws (and catches) a {@code SocketTimeoutException}, at a cost
   * in CPU (filling in the exception's stack trace), which asking first paid after every message
   * under load. PgJDBC still does so once after a keepalive, which it consumes and then reads on
   * from, and a walsender that has caught up sends one after each of its sends: in a profile of the
   * POST load the exceptions went from 1.3 % of Ackpoint's CPU to 0.8 %. A wait that ends without a
   * byte does not ask either: the status update due every status interval, which PgJDBC would send
   * from its read, is sent by this loop, so an idle stream wakes once per interval.
   */
  private ByteBuffer read() throws SQLException {
    // Polling (PgJDBC's stream out of reach) asks first and sleeps only when nothing was there.
    boolean ask = !idle.onSocket();
    while (true) {
      if (ask) {
        ByteBuffer message = stream.readPending();
        if (message != null) {
          lastMessageNanos = System.nanoTime();
          return message;
        }
        if (stream.isClosed()) {
          throw serverEnded();
        }
      }
      if (aborted) {
        return null;
      }
      confirmIdle();
      long now = System.nanoTime();
      if (now - lastMessageNanos > silenceLimitNanos) {
        throw new SQLException("nothing from the replication connection for " + Duration.ofNanos(silenceLimitNanos).toSeconds()
            + " s although a heartbeat marker is written more often and a reply was asked for: the connection is presumed dead");
      }
      if (now - lastMessageNanos > silenceLimitNanos / 4 && now - lastReplyRequestNanos > silenceLimitNanos / 4) {
        // A walsender decoding a large transaction (even one of tables it does not publish, whose
        // changes it reads and leaves out) sends nothing for as long. It reads replies meanwhile at
        // least every wal_sender_timeout / 2 (PostgreSQL 15 on) and answers one that asks for it
        // with a keepalive: silence then means a dead connection or server, not a busy one.
        keepAlive();
        lastReplyRequestNanos = now;
      }
      if (now - lastStatusNanos >= statusIntervalNanos) {
        updateStatus(false);
      }
      int next;
      try {
        // At once when a byte is buffered; else the follower's own worker thread sleeps on the
        // socket until one arrives or the next status update is due.
        next = idle.await(untilStatusDue(System.nanoTime()));
      } catch (SQLException e) {
        if (aborted) {
          return null;
        }
        throw e;
      }
      if (next == COMMAND_COMPLETE) {
        // A server that shuts down ends the stream with CommandComplete alone (no CopyDone), which
        // PgJDBC's non-blocking read leaves unread for ever: it would wake every wait at once while
        // nothing is read, until a status update failed to be written.
        throw serverEnded();
      }
      if (next != -1) {
        // A byte: a message, or a keepalive (which PgJDBC consumes without showing it), a sign of life too.
        lastMessageNanos = System.nanoTime();
      }
      // A tick without a byte leaves PgJDBC alone: asking it costs a timed peek of its own (a
      // second wake-up) and would only send the status update, which the loop sends when due.
      ask = next != -1 || !idle.onSocket();
    }
  }

  /** How long an idle wait may last: until the status update is due, at most {@link #MAX_IDLE_TICK_MILLIS}. */
  private int untilStatusDue(long now) {
    long due = TimeUnit.NANOSECONDS.toMillis(lastStatusNanos + statusIntervalNanos - now);
    return (int) Math.max(1, Math.min(due, MAX_IDLE_TICK_MILLIS));
  }

  /**
   * Tells the server what was received and confirmed so far. Without {@code answerWanted} as PgJDBC
   * does every status interval from its reads: an answer would wake this thread again for nothing.
   */
  private void updateStatus(boolean answerWanted) throws SQLException {
    if (answerWanted) {
      stream.forceUpdateStatus();
    } else {
      status.send();
    }
    lastStatusNanos = System.nanoTime();
  }

  private static SQLException serverEnded() {
    return new SQLException("the server ended the replication stream (shutting down?)", "08006");
  }

  /**
   * A status update, with what was confirmed so far, that asks the server to answer: the server
   * hears from a stream not read for a while, and its answer shows that it is alive.
   */
  void keepAlive() throws SQLException {
    try {
      updateStatus(true);
    } catch (SQLException e) {
      broken = true;
      throw e;
    }
  }

  /**
   * Tells the source the stream was consumed up to {@code position}, so it can recycle the WAL
   * before it and never sends it again. The caller confirms a position only once everything before
   * it is stored: the custom checkpoints committed at it included. Acknowledgements never need old
   * messages again: any later position acknowledges every head before it.
   */
  void confirm(String position) {
    long lsn = Lsn.parse(position);
    if (unconfirmedCustom != null && lsn >= Lsn.parse(unconfirmedCustom)) {
      unconfirmedCustom = null;
    }
    if (lsn > confirmed) {
      confirmed = lsn;
      stream.setFlushedLSN(LogSequenceNumber.valueOf(lsn));
      stream.setAppliedLSN(LogSequenceNumber.valueOf(lsn));
    }
  }

  /**
   * Before each wait: everything PgJDBC has consumed so far (keepalives carry the server's WAL end)
   * is confirmed at once. A server that shuts down waits for exactly this before it stops,
   * and would otherwise wait until its wal_sender_timeout. Never inside a transaction, nor while
   * custom checkpoints handed out are not yet stored: the server's WAL end may lie beyond them.
   */
  private void confirmIdle() throws SQLException {
    if (unconfirmedCustom != null || decoder.inTransaction()) {
      return;
    }
    long received = stream.getLastReceiveLSN().asLong();
    if (received > confirmed) {
      confirmed = received;
      stream.setFlushedLSN(LogSequenceNumber.valueOf(received));
      stream.setAppliedLSN(LogSequenceNumber.valueOf(received));
      updateStatus(false);
    }
  }

  /** Whether status updates leave the server's answer unasked (else each asks for one). */
  boolean updatesQuietly() {
    return status.quiet();
  }

  /** Whether an idle stream sleeps on its socket (else it polls). */
  boolean waitsOnSocket() {
    return idle.onSocket();
  }

  /** Whether {@link #abort} was called: whatever fails after that is the abort's doing. */
  boolean aborted() {
    return aborted;
  }

  /**
   * Drops the connection at once, from any thread, unblocking a {@link #next()} in progress. A
   * graceful close would wait on the reading thread, and a server that is shutting down waits for
   * the client to confirm its last WAL.
   */
  void abort() {
    aborted = true;
    try {
      connection.abort(Runnable::run);
    } catch (SQLException ignored) {
      // already gone
    }
  }

  /**
   * Ends the stream and says goodbye to the server; a connection that failed is dropped instead:
   * PgJDBC (42.7.8, QueryExecutorCloseAction) lets go of the socket of a connection whose goodbye
   * cannot be sent without closing it, which then stayed open until a garbage collection, one per
   * reconnect after a walsender was terminated. Not {@link #abort}, whose mark says the failure was
   * the abort's doing.
   */
  @Override
  public void close() {
    if (broken) {
      try {
        connection.abort(Runnable::run);
      } catch (SQLException ignored) {
        // already gone
      }
      return;
    }
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
