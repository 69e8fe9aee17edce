package io.ackpoint.source;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Reaches the follower's blocking thread from the thread that stops it, wherever it waits: in the
 * pause between attempts (which returns at once), on a connection being opened (PgJDBC waits for it
 * interruptibly when a login timeout is set, and the thread is interrupted), and in a statement or a
 * stream read on a connection it opened (aborted). A stop can therefore wait for the thread to end,
 * and no connection the thread uses outlives the stop: no replication connection holds the slot
 * after it. (A login given up goes on, on PgJDBC's own thread, until it fails or succeeds; PgJDBC then
 * closes its connection, which never reached the slot.)
 *
 * <p>Invariant: a connection opened after {@link #stop()} is aborted before it is handed out. Both
 * sides check after they write (the connection joins the set, then the stop is read; the stop is
 * set, then the set is read), so one of them always sees the other.
 */
final class FollowerStop implements PgLogicalStream.Connector {

  private final CountDownLatch requested = new CountDownLatch(1);
  /** The connections of the current attempt, open or not yet closed by the thread. */
  private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
  /** The thread running the follower's loop, while it does; guarded by {@code this}. */
  private Thread thread;

  /**
   * Whether the follower's loop must end, asked on its thread: a stop was requested, or the thread was
   * interrupted without one (its pool shut down, as when a deployment is undone during its start).
   * Not taking such an interrupt for a stop would make every later pause and connect return at once:
   * the loop would spin.
   */
  boolean requested() {
    return requested.getCount() == 0 || Thread.currentThread().isInterrupted();
  }

  /** Blocks the calling thread for {@code millis}, or less if a stop comes meanwhile. */
  void pause(long millis) {
    try {
      requested.await(millis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The follower's loop runs on the calling thread until {@link #left()}: a stop interrupts it. */
  synchronized void entered() {
    thread = Thread.currentThread();
  }

  /** The follower's loop has ended: its thread goes back to its pool, which a stop must not interrupt. */
  synchronized void left() {
    thread = null;
  }

  /** An attempt is over and has closed its connections: they are no longer the stop's to abort. */
  void attemptEnded() {
    connections.clear();
  }

  @Override
  public Connection connect(String url, Properties props) throws SQLException {
    Connection connection = DriverManager.getConnection(url, props);
    connections.add(connection);
    if (requested()) {
      abort(connection);
      throw new SQLException("the follower is stopping");
    }
    return connection;
  }

  /** Blocks briefly (a socket's close): call it off the event loop. */
  void stop() {
    requested.countDown();
    synchronized (this) {
      if (thread != null) {
        thread.interrupt();
      }
    }
    connections.forEach(FollowerStop::abort);
  }

  private static void abort(Connection connection) {
    try {
      connection.abort(Runnable::run);
    } catch (SQLException ignored) {
      // already gone
    }
  }
}
