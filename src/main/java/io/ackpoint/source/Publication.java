package io.ackpoint.source;

import io.ackpoint.config.AckpointConfig.CustomTable;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.Set;

/**
 * Ackpoint's publication on the source. In managed mode it has no tables, so only logical messages
 * (the markers) travel; in custom mode it carries exactly the custom table, named by its exact,
 * quoted, case-sensitive name. The publication name is validated by the configuration
 * ({@code [a-z0-9_]}, which needs no quoting).
 */
final class Publication {

  private static final Logger LOG = LoggerFactory.getLogger(Publication.class);

  private static final String TABLES = "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = ?";
  private static final String FLAGS = "SELECT pubinsert, pubupdate, pubdelete, pubviaroot FROM pg_publication WHERE pubname = ?";

  private Publication() {
  }

  /**
   * Creates the publication if missing and, in custom mode, makes the custom table its only table,
   * published with its updates if PostgreSQL can publish them without failing the application's
   * (a replica identity on every partition), else its inserts only, with a warning.
   */
  static void ensure(Connection c, String publication, CustomTable customTable) throws SQLException {
    boolean updates = true;
    if (customTable != null) {
      // Before anything is published: a misnamed table must be reported, not followed in silence.
      CustomTableCheck.verify(c, customTable);
      updates = CustomTableCheck.updatesPublishable(c, customTable);
    }
    if (!exists(c, publication)) {
      execute(c, "CREATE PUBLICATION " + publication + " WITH (" + options(updates) + ")",
          "42710"); // 42710: created concurrently by another node
    }
    if (customTable == null) {
      return;
    }
    String table = quoted(customTable.schemaName()) + "." + quoted(customTable.tableName());
    boolean viaRoot = CustomTableCheck.partitioned(c, customTable);
    // Altered only when needed: a publication an administrator made right needs no ownership of it.
    if (!publishedTables(c, publication).equals(Set.of(table)) || !hasFlags(c, publication, updates, viaRoot)) {
      // SET, not ADD: a table published by an older version under a folded name leaves the publication.
      // A partitioned table published without publish_via_partition_root is listed by its partitions.
      // One transaction: between the two, a table leaving the publication must not publish
      // updates it has no replica identity for, nor a table joining it.
      execute(c, "ALTER PUBLICATION " + publication + " SET (" + options(updates) + "); ALTER PUBLICATION "
          + publication + " SET TABLE " + table, "42710");
      LOG.info("publication {} publishes custom.table {}", publication, table);
    }
    // Once the publication says so: the application's updates succeed from the moment this is read.
    if (!updates) {
      LOG.warn("custom.table {} has no replica identity (a primary key) on every partition: only its inserts are followed,"
          + " not its updates, which would fail in the application if published", table);
    }
  }

  /**
   * Only inserts, and updates if they can be: deletes would need a replica identity too. A
   * partitioned table's rows are published under its own name, not its partitions' (which the
   * decoder would not recognise: every row ignored).
   */
  private static String options(boolean updates) {
    return "publish = '" + (updates ? "insert, update" : "insert") + "', publish_via_partition_root = true";
  }

  private static boolean hasFlags(Connection c, String publication, boolean updates, boolean viaRoot) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(FLAGS)) {
      s.setString(1, publication);
      try (ResultSet rs = s.executeQuery()) {
        // Deletes need a replica identity as updates do: an administrator's publication of them is
        // left alone only where the table has one.
        return rs.next() && rs.getBoolean(1) && rs.getBoolean(2) == updates && (updates || !rs.getBoolean(3))
            && (rs.getBoolean(4) || !viaRoot);
      }
    }
  }

  /** A PostgreSQL identifier, quoted so that it is taken exactly as written. */
  static String quoted(String identifier) {
    return '"' + identifier.replace("\"", "\"\"") + '"';
  }

  private static boolean exists(Connection c, String publication) throws SQLException {
    try (PreparedStatement s = c.prepareStatement("SELECT 1 FROM pg_publication WHERE pubname = ?")) {
      s.setString(1, publication);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next();
      }
    }
  }

  private static Set<String> publishedTables(Connection c, String publication) throws SQLException {
    Set<String> tables = new HashSet<>();
    try (PreparedStatement s = c.prepareStatement(TABLES)) {
      s.setString(1, publication);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          tables.add(quoted(rs.getString(1)) + "." + quoted(rs.getString(2)));
        }
      }
    }
    return tables;
  }

  private static void execute(Connection c, String sql, String toleratedState) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    } catch (SQLException e) {
      if (!toleratedState.equals(e.getSQLState())) {
        throw e;
      }
    }
  }
}
