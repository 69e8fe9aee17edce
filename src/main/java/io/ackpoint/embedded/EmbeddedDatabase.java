package io.ackpoint.embedded;

import io.ackpoint.config.AckpointConfig.EmbeddedConfig;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The default database: a PostgreSQL server started by this process, with its data kept in
 * {@code embedded.data_dir} across restarts. Starting it blocks, so it happens before Vert.x starts.
 */
public final class EmbeddedDatabase implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedDatabase.class);

  private final EmbeddedPostgres postgres;
  /** The server's process, or null if its pid file could not be read (then it is taken as running). */
  private final ProcessHandle postmaster;

  private EmbeddedDatabase(EmbeddedPostgres postgres, ProcessHandle postmaster) {
    this.postgres = postgres;
    this.postmaster = postmaster;
  }

  public static EmbeddedDatabase start(EmbeddedConfig config) {
    try {
      Path dataDir = config.dataDir().toAbsolutePath();
      Files.createDirectories(dataDir);
      LeftoverServer.stopIfRunning(dataDir);
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
          // The embedded defaults trade durability for speed; a checkpoint service cannot: an
          // acknowledged write must survive a crash, and logical decoding must see each commit.
          .setServerConfig("fsync", "on")
          .setServerConfig("synchronous_commit", "on")
          .setServerConfig("full_page_writes", "on");
      if (config.port() != 0) {
        builder.setPort(config.port());
      }
      EmbeddedPostgres postgres = builder.start();
      ProcessHandle postmaster = LeftoverServer.postmaster(dataDir).orElse(null);
      if (postmaster == null) {
        LOG.warn("the embedded PostgreSQL's process was not found by {}: liveness cannot tell if it stops",
            dataDir.resolve("postmaster.pid"));
      }
      return new EmbeddedDatabase(postgres, postmaster);
    } catch (IOException e) {
      throw new UncheckedIOException("could not start the embedded PostgreSQL in " + config.dataDir() + ": " + e.getMessage(), e);
    }
  }

  /**
   * Whether the server process still runs. Nothing restarts it but a restart of Ackpoint, which owns
   * it: its liveness probe says so.
   */
  public boolean isRunning() {
    return postmaster == null || postmaster.isAlive() && !isZombie(postmaster.pid());
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

  public String uri() {
    return "postgresql://postgres@localhost:" + port() + "/postgres";
  }

  @Override
  public void close() {
    try {
      postgres.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
