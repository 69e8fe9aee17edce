package io.ackpoint.embedded;

import io.ackpoint.config.AckpointConfig.EmbeddedConfig;
import io.ackpoint.config.FreePorts;
import io.vertx.core.Vertx;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The default database: a PostgreSQL server started by this process, with its data kept in
 * {@code embedded.data_dir} across restarts. Starting it blocks, so it happens before Vert.x starts.
 */
public final class EmbeddedDatabase implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedDatabase.class);

  /** How often {@link #watchExit} looks whether the server still runs. */
  private static final Duration EXIT_CHECK = Duration.ofSeconds(10);
  /** How much longer than the library a stopping server is given to exit. */
  private static final Duration STOP_GRACE = Duration.ofSeconds(10);
  /** The data directories of the servers this process started and has not stopped (or is starting). */
  private static final Set<Path> STARTED_HERE = ConcurrentHashMap.newKeySet();

  /** The server's own log, in the data directory. */
  static final String SERVER_LOG = "log";

  private final EmbeddedPostgres postgres;
  /** Where the library's commands write their output: see {@link #startClaimed}. */
  private final Path output;
  /** This server's data directory, in {@link #STARTED_HERE} until it is stopped. */
  private final AtomicReference<Path> claim = new AtomicReference<>();
  /** The server's process, or null if its pid file could not be read (then it is taken as running). */
  private final ProcessHandle postmaster;

  /** Where the server writes its own log. */
  private final Path serverLog;
  /** Whether the server's stop was logged: once. */
  private final AtomicBoolean stopLogged = new AtomicBoolean();
  /** Cancels {@link #watchExit}'s timer; null while there is none. Guarded by this. */
  private Runnable exitWatch;
  /**
   * Stops the server when the JVM exits without {@link #close} (an application that embeds Ackpoint
   * and ends on a signal, or Main's unclean stop; not Main's second TERM, which halts and runs no
   * hook): a postmaster whose parent is gone kept its port
   * and data directory until the next start of Ackpoint there. SIGTERM is PostgreSQL's smart
   * shutdown, which completes once this process's connections close with it; the hook waits for
   * nothing, so it holds no exit up.
   */
  private final Thread stopOnExit;

  private EmbeddedDatabase(EmbeddedPostgres postgres, Path output, ProcessHandle postmaster, Path dataDir) {
    this.postgres = postgres;
    this.output = output;
    this.postmaster = postmaster;
    this.serverLog = dataDir.resolve(SERVER_LOG);
    this.stopOnExit = new Thread(() -> postmaster().ifPresent(ProcessHandle::destroy), "ackpoint-embedded-postgres-exit");
  }

  /**
   * Looks at the server process every {@link #EXIT_CHECK} on {@code vertx}'s timer until {@link #close},
   * so that its stop is logged (by {@link #isRunning}) when nobody probes liveness. Not
   * {@code ProcessHandle.onExit()}: the server is no child of this JVM, so the JDK would poll for its
   * exit on a thread of its own, every 0.3 s at first and slowing to every 5 s over some seven
   * minutes, the most frequent wake-up of an idle Ackpoint in that time (README, Benchmarks).
   */
  public synchronized void watchExit(Vertx vertx) {
    if (postmaster == null || exitWatch != null || claim.get() == null) {
      return;
    }
    long timer = vertx.setPeriodic(EXIT_CHECK.toMillis(), id -> {
      if (!isRunning()) {
        vertx.cancelTimer(id);
      }
    });
    exitWatch = () -> vertx.cancelTimer(timer);
  }

  public static EmbeddedDatabase start(EmbeddedConfig config) {
    // One directory, one claim, however its path is written (data, ./data, x/../data, a link to it).
    Path dataDir = realPath(config);
    // Claimed before anything touches the directory: two starts at once in this process would both
    // run initdb in it, or trip over each other's file lock.
    if (!STARTED_HERE.add(dataDir)) {
      throw failure(config, new IOException("it is in use by this process already"));
    }
    try {
      EmbeddedDatabase started = startClaimed(config, dataDir);
      started.claim.set(dataDir);
      try {
        Runtime.getRuntime().addShutdownHook(started.stopOnExit);
      } catch (IllegalStateException exiting) {
        // The JVM began to exit while the server started: nobody will close it.
        started.close();
        throw exiting;
      }
      return started;
    } catch (RuntimeException e) {
      STARTED_HERE.remove(dataDir);
      throw e;
    }
  }

  private static Path realPath(EmbeddedConfig config) {
    try {
      Path dataDir = config.dataDir().toAbsolutePath().normalize();
      Files.createDirectories(dataDir);
      return dataDir.toRealPath();
    } catch (IOException e) {
      throw failure(config, e);
    }
  }

  private static EmbeddedDatabase startClaimed(EmbeddedConfig config, Path dataDir) {
    try {
      LeftoverServer.stopIfRunning(dataDir);
      if (config.port() != 0) {
        requireFree(config.port());
      }
      LOG.info("starting the embedded PostgreSQL in {}", dataDir);
      EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
          .setDataDirectory(dataDir)
          .setCleanDataDirectory(false)
          // Main stops the database itself, after Ackpoint has let go of its connections.
          .setRegisterShutdownHook(false)
          .setServerConfig("wal_level", "logical")
          .setServerConfig("max_wal_senders", "10")
          .setServerConfig("max_replication_slots", "10")
          .setServerConfig("max_connections", "200")
          // TCP alone (Ackpoint connects to localhost): a Unix socket's lock file in /tmp outlives a
          // server killed outright, and once its PID is another process's, no server of that port
          // starts again ("lock file /tmp/.s.PGSQL.<port>.lock already exists").
          .setServerConfig("unix_socket_directories", "")
          // The embedded defaults trade durability for speed; a checkpoint service cannot: an
          // acknowledged write must survive a crash, and logical decoding must see each commit.
          .setServerConfig("fsync", "on")
          .setServerConfig("synchronous_commit", "on")
          .setServerConfig("full_page_writes", "on")
          // Ackpoint reads the server's output once, after its start (below): what the server says
          // later (a crash, a full disk, a slot invalidated) goes to files of its own, one per
          // weekday, each emptied when its day comes again.
          .setServerConfig("logging_collector", "on")
          .setServerConfig("log_directory", SERVER_LOG)
          .setServerConfig("log_filename", "postgresql-%a.log")
          .setServerConfig("log_truncate_on_rotation", "on")
          .setServerConfig("log_rotation_age", "1d")
          .setServerConfig("log_rotation_size", "0");
      if (config.port() != 0) {
        builder.setPort(config.port());
      }
      // The output of initdb, pg_ctl and the server (until its log collector runs) goes to a file,
      // read once each command has ended, not to a pipe: the server inherits pg_ctl's output, so a
      // pipe stays open as long as the server runs, and with it the library's thread that reads it
      // and the JDK's thread that waits for pg_ctl to end (blocked behind the reader, it woke every
      // second for as long, one of an idle Ackpoint's wake-ups).
      Path output = Files.createTempFile("ackpoint-postgres-", ".log");
      ProcessBuilder.Redirect appended = ProcessBuilder.Redirect.appendTo(output.toFile());
      builder.setOutputRedirector(appended).setErrorRedirector(appended);
      EmbeddedPostgres postgres;
      Instant attempted = Instant.now();
      try {
        postgres = builder.start();
      } catch (IOException | IllegalStateException e) {
        ServerProblems.logOutput(output);
        ServerProblems.logLastStart(dataDir.resolve(SERVER_LOG), attempted);
        // The library names a failed initdb or pg_ctl by its whole command line; what they said is logged above.
        String message = String.valueOf(e.getMessage());
        if (e instanceof IllegalStateException && message.startsWith("Process [")) {
          String command = message.contains("/initdb,") ? "initdb" : message.contains("/pg_ctl,") ? "pg_ctl" : "PostgreSQL";
          throw new IOException(command + " failed (its reason is logged above)", e);
        }
        throw e;
      }
      ServerProblems.logOutput(output);
      ProcessHandle postmaster = LeftoverServer.postmaster(dataDir).orElse(null);
      if (postmaster == null) {
        LOG.warn("the embedded PostgreSQL's process was not found by {}: liveness cannot tell if it stops",
            dataDir.resolve("postmaster.pid"));
      }
      return new EmbeddedDatabase(postgres, output, postmaster, dataDir);
    } catch (IOException e) {
      throw failure(config, e);
    }
  }

  private static UncheckedIOException failure(EmbeddedConfig config, IOException e) {
    return new UncheckedIOException("could not start the embedded PostgreSQL in " + config.dataDir() + " (embedded.data_dir): "
        + reason(e), e);
  }

  /** A file system's refusal says only the path in its message; its kind says what went wrong. */
  private static String reason(IOException e) {
    if (!(e instanceof FileSystemException refused) || refused.getReason() != null) {
      return e.getMessage();
    }
    String kind = e instanceof AccessDeniedException ? "permission denied"
        : e instanceof FileAlreadyExistsException ? "exists and is not a directory"
        : e instanceof NoSuchFileException ? "no such file or directory"
        : e.getClass().getSimpleName();
    return refused.getFile() + ": " + kind;
  }

  /**
   * A port taken by another server would make PostgreSQL give up only after the library's start-up
   * wait, with a message that does not say why, and the library keeps the data directory locked
   * after a failed start, for as long as this process runs.
   */
  private static void requireFree(int port) throws IOException {
    IOException inUse = FreePorts.bindFailure(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    if (inUse != null) {
      throw new IOException("embedded.port " + port + " is in use by another process (" + inUse.getMessage() + ")", inUse);
    }
  }

  /**
   * Whether the server process still runs. Nothing restarts it but a restart of Ackpoint, which owns
   * it: its liveness probe says so.
   */
  public boolean isRunning() {
    boolean running = postmaster == null || postmaster.isAlive() && !isZombie(postmaster.pid());
    // Liveness tells an orchestrator; the log tells whoever reads it, once, where the server said why.
    if (!running && claim.get() != null && stopLogged.compareAndSet(false, true)) {
      LOG.error("the embedded PostgreSQL (pid {}) has stopped; only a restart of Ackpoint starts it again; its own log is in {}",
          postmaster.pid(), serverLog);
    }
    return running;
  }

  /**
   * A killed server whose parent has not collected it yet (a zombie: its parent is whatever PID 1
   * is, which may reap late) still counts as alive to {@link ProcessHandle#isAlive}, yet has
   * stopped. Linux's {@code /proc} tells (a small in-memory read, as {@code isAlive} itself does);
   * elsewhere {@code isAlive} alone decides.
   */
  private static boolean isZombie(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      int commandEnd = stat.lastIndexOf(')');
      return commandEnd > 0 && commandEnd + 2 < stat.length() && stat.charAt(commandEnd + 2) == 'Z';
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  public int port() {
    return postgres.getPort();
  }

  /** The server's postmaster, found by its {@code postmaster.pid} at start; empty if it was not. */
  public Optional<ProcessHandle> postmaster() {
    return Optional.ofNullable(postmaster);
  }

  public String uri() {
    return "postgresql://postgres@localhost:" + port() + "/postgres";
  }

  /**
   * Stops the server, or fails saying that it did not stop; the data directory is this process's to start
   * again either way. Once.
   */
  @Override
  public void close() {
    Path claimed = claim.getAndSet(null);
    if (claimed == null) {
      return;
    }
    synchronized (this) {
      if (exitWatch != null) {
        exitWatch.run();
      }
    }
    try {
      Runtime.getRuntime().removeShutdownHook(stopOnExit);
    } catch (IllegalStateException exiting) {
      // Closed by another hook while the JVM exits: this one runs too, and asks for the same stop.
    }
    try {
      postgres.close();
      // pg_ctl stop's complaint, if any ("server does not shut down").
      ServerProblems.logOutput(output);
      // The library logs a stop that failed (a server that does not answer pg_ctl in time) and carries on.
      // The server's lock file tells: it takes the file away just before it exits (its process may
      // linger a moment longer, so the process itself cannot tell at once).
      Optional<ProcessHandle> running = LeftoverServer.postmaster(claimed);
      // A shutdown that is slow but under way (a long shutdown checkpoint) may outlast the library's
      // 5 s: it is given longer before the stop is called failed.
      if (running.isPresent() && !LeftoverServer.exited(running.get(), STOP_GRACE)
          // Looked at again: a server that exited but is not yet reaped (a zombie) never "exits" for onExit.
          && LeftoverServer.postmaster(claimed).isPresent()) {
        throw new IOException("the embedded PostgreSQL in " + claimed + " (pid " + running.get().pid() + ") did not stop");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      STARTED_HERE.remove(claimed);
    }
  }
}
