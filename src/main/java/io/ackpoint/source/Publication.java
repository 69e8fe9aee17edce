package io.ackpoint.source;

import io.ackpoint.config.AckpointConfig.CustomTable;

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

  private static final String TABLES = "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = ?";
  /**
   * A partitioned custom table's rows are published under its own name, not its partitions' (which
   * the decoder would not recognise: every row ignored).
   */
  private static final String OPTIONS = "publish = 'insert, update', publish_via_partition_root = true";

  private Publication() {
  }

  /** Creates the publication if missing and, in custom mode, makes the custom table its only table. */
  static void ensure(Connection c, String publication, CustomTable customTable) throws SQLException {
    if (customTable != null) {
      // Before anything is published: a misnamed table must be reported, not followed in silence.
      CustomTableCheck.verify(c, customTable);
    }
    if (!exists(c, publication)) {
      // Only inserts and updates: deletes would need a replica identity on the application's table.
      execute(c, "CREATE PUBLICATION " + publication + " WITH (" + OPTIONS + ")",
          "42710"); // 42710: created concurrently by another node
    }
    if (customTable != null) {
      String table = quoted(customTable.schemaName()) + "." + quoted(customTable.tableName());
      if (!publishedTables(c, publication).equals(Set.of(table))) {
        // SET, not ADD: a table published by an older version under a folded name leaves the publication.
        // A partitioned table published without the option is listed here by its partitions.
        execute(c, "ALTER PUBLICATION " + publication + " SET (" + OPTIONS + ")", "42710");
        execute(c, "ALTER PUBLICATION " + publication + " SET TABLE " + table, "42710");
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
