package io.ackpoint.embedded;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The embedded PostgreSQL outlives an Ackpoint killed with SIGKILL (nothing stops it then), and a
 * server still running on the data directory makes the next start fail. This finds such a server by
 * the data directory's {@code postmaster.pid} and stops it the way PostgreSQL asks to be stopped
 * quickly and safely (SIGINT, a fast shutdown: committed data is kept), so that a restart recovers by
 * itself. A pid file whose process is gone, or is not PostgreSQL, is left for PostgreSQL to handle.
 *
 * <p>A server is a leftover only if no live process owns the data directory: the embedded
 * PostgreSQL library holds a file lock ({@code epg-lock}) on it for as long as its process runs, and
 * the operating system lets go of it when that process dies, however it dies. A second Ackpoint
 * started on the directory of one that runs (twice {@code scripts/run}, a new pod on the volume of
 * an old one that has not stopped yet) refuses to start instead of stopping the database under the
 * first one.
 */
final class LeftoverServer {

  private static final Logger LOG = LoggerFactory.getLogger(LeftoverServer.class);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
  /** The file the embedded PostgreSQL library locks while its process runs the server. */
  private static final String OWNER_LOCK = "epg-lock";

  private LeftoverServer() {
  }

  static void stopIfRunning(Path dataDir) throws IOException {
    refuseIfOwned(dataDir);
    Optional<ProcessHandle> server = postmaster(dataDir);
    if (server.isEmpty()) {
      return;
    }
    long pid = server.get().pid();
    LOG.warn("an embedded PostgreSQL left running on {} by an earlier Ackpoint (pid {}) is stopped first", dataDir, pid);
    Process kill = new ProcessBuilder("kill", "-INT", Long.toString(pid)).inheritIO().start();
    try {
      kill.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (!exited(server.get(), STOP_TIMEOUT)) {
      throw new IOException("the PostgreSQL left running on " + dataDir + " (pid " + pid + ") did not stop within "
          + STOP_TIMEOUT.toSeconds() + " s; stop it, then start Ackpoint again");
    }
  }

  /** Waits at most {@code within} for {@code server} to exit; answers whether it did. */
  static boolean exited(ProcessHandle server, Duration within) {
    try {
      server.onExit().get(within.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException | TimeoutException e) {
      return false;
    }
  }

  /**
   * Fails if a live process holds the data directory's lock. Taken and let go at once: the embedded
   * PostgreSQL library takes it for good when it starts the server, right after.
   */
  private static void refuseIfOwned(Path dataDir) throws IOException {
    Path lockFile = dataDir.resolve(OWNER_LOCK);
    if (!Files.exists(lockFile)) {
      return;
    }
    try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.WRITE);
         FileLock lock = channel.tryLock()) {
      if (lock == null) {
        throw new IOException("it is in use by another running Ackpoint (embedded.data_dir); stop that one first,"
            + " or give this one a data directory of its own");
      }
    } catch (OverlappingFileLockException e) {
      // Not a server of this process's that runs (EmbeddedDatabase refuses those first): the lock the
      // library took for a start that failed, which it never lets go of, or one held by a path that
      // leads to the same directory another way (a link).
      throw new IOException("it is in use in this process (by an Ackpoint on a path that leads to the same directory,"
          + " or left locked by a start that failed: then only a restart of the process frees it)", e);
    }
  }

  /** The PostgreSQL server running on {@code dataDir}, by its {@code postmaster.pid}, if any. */
  static Optional<ProcessHandle> postmaster(Path dataDir) throws IOException {
    Path pidFile = dataDir.resolve("postmaster.pid");
    if (!Files.exists(pidFile)) {
      return Optional.empty();
    }
    List<String> lines = Files.readAllLines(pidFile);
    if (lines.size() < 2 || !lines.get(0).trim().matches("\\d{1,10}")
        || !Path.of(lines.get(1).trim()).toAbsolutePath().equals(dataDir.toAbsolutePath())) {
      return Optional.empty();
    }
    return ProcessHandle.of(Long.parseLong(lines.get(0).trim()))
        .filter(ProcessHandle::isAlive)
        .filter(p -> p.info().command().map(c -> c.endsWith("postgres")).orElse(false));
  }
}
