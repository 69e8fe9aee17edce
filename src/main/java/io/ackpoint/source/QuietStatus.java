package io.ackpoint.source;

import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.sql.SQLException;

/**
 * Sends a replication stream's status update (what was received, flushed and applied) without
 * asking the server to answer it. PgJDBC's public {@code forceUpdateStatus()} always asks, and the
 * server answers with a keepalive, which wakes the reading thread once more, and whose WAL end, when
 * it moved on, was confirmed with another status update that asked again. PgJDBC sends its own
 * periodic updates without asking (but for the ones before anything was received, which it always
 * asks for), through a private method, reached here by reflection; where that is not possible
 * (another PgJDBC), updates ask, as they used to, and a warning says so.
 */
final class QuietStatus {

  private static final Logger LOG = LoggerFactory.getLogger(QuietStatus.class);
  /** PgJDBC's stream class, which declares {@link #UPDATE}; null when out of reach. */
  private static final Class<?> STREAM_CLASS = streamClass();
  /** PgJDBC's update that may leave the reply unasked, or null when out of reach. */
  private static final MethodHandle UPDATE = updateHandle();

  private final PGReplicationStream stream;
  private final boolean quiet;

  QuietStatus(PGReplicationStream stream) {
    this.stream = stream;
    this.quiet = UPDATE != null && STREAM_CLASS.isInstance(stream);
  }

  private static Class<?> streamClass() {
    try {
      return Class.forName("org.postgresql.core.v3.replication.V3PGReplicationStream");
    } catch (ClassNotFoundException | LinkageError e) {
      return null;
    }
  }

  private static MethodHandle updateHandle() {
    try {
      if (STREAM_CLASS == null) {
        throw new ClassNotFoundException("org.postgresql.core.v3.replication.V3PGReplicationStream");
      }
      var method = STREAM_CLASS.getDeclaredMethod("updateStatusInternal",
          LogSequenceNumber.class, LogSequenceNumber.class, LogSequenceNumber.class, boolean.class);
      method.setAccessible(true);
      return MethodHandles.lookup().unreflect(method).asType(MethodType.methodType(void.class, PGReplicationStream.class,
          LogSequenceNumber.class, LogSequenceNumber.class, LogSequenceNumber.class, boolean.class));
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.warn("replication status updates ask the server for a reply: PgJDBC's quiet update is out of reach ({})", e.toString());
      return null;
    }
  }

  /** Whether updates go without asking for a reply. */
  boolean quiet() {
    return quiet;
  }

  void send() throws SQLException {
    if (!quiet) {
      stream.forceUpdateStatus();
      return;
    }
    try {
      UPDATE.invokeExact(stream, stream.getLastReceiveLSN(), stream.getLastFlushedLSN(), stream.getLastAppliedLSN(), false);
    } catch (SQLException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new SQLException("the replication status update failed: " + e, "08006", e);
    }
  }
}
