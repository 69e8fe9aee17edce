package io.ackpoint.support;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One real PostgreSQL server for the whole test run (started on first use, with logical decoding on
 * and durable commits), and a fresh database in it for each test that asks. The server is the
 * embedded PostgreSQL 17, or, with {@code -Dackpoint.test.postgres.port=N}, a server already running
 * on localhost:N that trusts the user postgres (scripts/test-postgres15 runs part of the suite on
 * Debian's PostgreSQL 15 that way).
 */
public final class TestDatabase {

  private static final AtomicInteger DATABASES = new AtomicInteger();
  private static EmbeddedPostgres server;

  private TestDatabase() {
  }

  private static final String EXTERNAL_PORT = System.getProperty("ackpoint.test.postgres.port", "");

  /** The port of the test run's PostgreSQL server on localhost. */
  public static int port() {
    return EXTERNAL_PORT.isEmpty() ? server().getPort() : Integer.parseInt(EXTERNAL_PORT);
  }

  private static synchronized EmbeddedPostgres server() {
    if (server == null) {
      try {
        server = EmbeddedPostgres.builder()
            .setDataDirectory(Files.createTempDirectory("ackpoint-test-pg"))
            .setCleanDataDirectory(true)
            .setServerConfig("wal_level", "logical")
            // Every test that follows replication makes a slot of its own, and an unused slot still
            // counts against the limit until the server goes: the suite made more than 64 (CI,
            // ClusterTest: "all replication slots are in use").
            .setServerConfig("max_wal_senders", "64")
            .setServerConfig("max_replication_slots", "256")
            .setServerConfig("max_connections", "300")
            .setServerConfig("synchronous_commit", "on")
            .start();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      EmbeddedPostgres started = server;
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          started.close();
        } catch (IOException ignored) {
          // the JVM is going away
        }
      }));
    }
    return server;
  }

  /** Creates an empty database and answers its URI, for the Vert.x PG client. */
  public static String freshDatabase() {
    return freshDatabase("");
  }

  /** {@link #freshDatabase()} with {@code options} of {@code CREATE DATABASE} (its encoding, say). */
  public static String freshDatabase(String options) {
    String name = "ackpoint_test_" + DATABASES.incrementAndGet();
    try (Connection c = DriverManager.getConnection(jdbcUri("postgres"), "postgres", "");
         Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name + " " + options);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return "postgresql://postgres@localhost:" + port() + "/" + name;
  }

  public static String jdbcUri(String database) {
    return "jdbc:postgresql://localhost:" + port() + "/" + database;
  }
}
