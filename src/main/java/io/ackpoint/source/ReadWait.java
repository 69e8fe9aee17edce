package io.ackpoint.source;

import org.postgresql.core.BaseConnection;
import org.postgresql.core.PGStream;
import org.postgresql.core.QueryExecutorBase;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.EOFException;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Lets the follower's thread sleep until the replication connection has bytes to read, or a tick
 * has passed. PgJDBC offers a non-blocking {@code readPending()}, which answers at once, and a
 * blocking {@code read()}, which does not return while the stream is idle; but an idle follower must
 * still confirm the server's position (a server that shuts down waits for it) and notice silence.
 * Polling every few milliseconds instead kept an idle Ackpoint busy.
 *
 * <p>PgJDBC keeps its connection stream to itself, so it is reached by reflection; the wait only
 * peeks (the bytes stay buffered for PgJDBC to read). Where that is not possible (another PgJDBC),
 * the wait is a short sleep, as it used to be, and a warning says so.
 */
final class ReadWait {

  private static final Logger LOG = LoggerFactory.getLogger(ReadWait.class);
  /** The poll interval when the stream cannot be reached: bounds the delay polling adds to an acknowledgement. */
  private static final long FALLBACK_POLL_MILLIS = 2;

  private final PGStream stream;

  private ReadWait(PGStream stream) {
    this.stream = stream;
  }

  static ReadWait on(Connection connection) {
    try {
      Object executor = connection.unwrap(BaseConnection.class).getQueryExecutor();
      Field field = QueryExecutorBase.class.getDeclaredField("pgStream");
      field.setAccessible(true);
      return new ReadWait((PGStream) field.get(executor));
    } catch (ReflectiveOperationException | SQLException | RuntimeException e) {
      LOG.warn("the replication stream is polled every {} ms: PgJDBC's connection stream is out of reach ({})",
          FALLBACK_POLL_MILLIS, e.toString());
      return new ReadWait(null);
    }
  }

  /** Whether {@link #await} sleeps on the socket itself, as opposed to polling. */
  boolean onSocket() {
    return stream != null;
  }

  /**
   * Returns once a byte can be read, answering it (the first byte of the next message: its type), or
   * after {@code millis}, answering -1; the byte is not consumed.
   */
  int await(int millis) throws SQLException {
    if (stream == null) {
      sleep();
      return -1;
    }
    try {
      int saved = stream.getNetworkTimeout();
      stream.setNetworkTimeout(millis);
      try {
        return stream.peekChar();
      } catch (SocketTimeoutException nothingYet) {
        return -1; // the tick passed without a byte
      } finally {
        stream.setNetworkTimeout(saved);
      }
    } catch (EOFException e) {
      throw new SQLException("the server closed the replication connection while it was idle", "08006", e);
    } catch (IOException e) {
      throw new SQLException("the replication connection failed while idle: " + e, "08006", e);
    }
  }

  private static void sleep() {
    try {
      Thread.sleep(FALLBACK_POLL_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
