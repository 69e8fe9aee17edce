package io.ackpoint.source;

import io.ackpoint.config.AckpointConfig.CustomTable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Checks, before the follower publishes the custom table, that the table and every configured
 * column exist under exactly their configured names. PostgreSQL folds unquoted names to lower case,
 * so {@code Checkpoints} configured against a table created as {@code checkpoints} would otherwise
 * be published and then never match: every row ignored, in silence. Reads pg_catalog, which shows
 * every table whatever the role's privileges on it.
 */
final class CustomTableCheck {

  private static final String TABLES = """
      SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relkind IN ('r', 'p') AND lower(n.nspname) = lower(?) AND lower(c.relname) = lower(?)
      """;
  /**
   * Whether PostgreSQL can publish the table's updates: the table and every partition that holds
   * rows need a replica identity (partitions inherit the table's primary key, not its REPLICA
   * IDENTITY setting), the primary key by default, or an index, or FULL; a key PostgreSQL cannot
   * use for it (deferrable, not yet valid) does not count. Where one has none, publishing updates
   * makes every UPDATE of the application's fail ("cannot update table ... because it does not
   * have a replica identity").
   */
  private static final String REPLICA_IDENTITY = replicaIdentity("?", "?");

  /** {@link #REPLICA_IDENTITY} with its two parameters, the schema and the table, written as given. */
  static String replicaIdentity(String schema, String table) {
    return """
        WITH t AS (
          SELECT c.oid, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = %s
        ),
        holding AS (
          SELECT oid FROM t
          UNION
          SELECT p.relid FROM t, pg_partition_tree(t.oid) p WHERE t.relkind = 'p' AND p.isleaf
        )
        SELECT coalesce(bool_and(
                 c.relreplident = 'f'
                 OR EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisvalid AND i.indimmediate
                               AND CASE c.relreplident WHEN 'i' THEN i.indisreplident WHEN 'd' THEN i.indisprimary ELSE false END)), false)
          FROM holding h JOIN pg_class c ON c.oid = h.oid
        """.formatted(schema, table);
  }

  private static final String PARTITIONED = """
      SELECT c.relkind = 'p' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = ?
      """;
  /** The table's columns, and whether each is generated (PostgreSQL up to 17 never publishes those). */
  private static final String COLUMNS = """
      SELECT a.attname, a.attgenerated <> '' FROM pg_attribute a
        JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ? AND c.relname = ? AND a.attnum > 0 AND NOT a.attisdropped
      """;

  /**
   * Whether the table of schema {@code schema} and name {@code table} (parameters as written) has
   * every column of {@code columns} (a text array), none of them generated: what {@link #verify}
   * requires of the columns, asked again while the table is followed.
   */
  static String hasColumns(String schema, String table, String columns) {
    return """
        SELECT count(*) = cardinality(%3$s::text[]) FROM pg_attribute a
          JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = %1$s AND c.relname = %2$s AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
           AND a.attname = ANY (%3$s::text[])
        """.formatted(schema, table, columns);
  }

  /**
   * Whether the database is SQL_ASCII, whose text the server never checks: the replication stream
   * converts each published row to UTF-8 for its client and, at a row whose bytes are not UTF-8,
   * fails, every time the slot sends that row again (the WAL keeps it after the row is deleted), so
   * that nothing after it would ever be acknowledged.
   */
  private static final String UNCHECKED_ENCODING = "SELECT current_setting('server_encoding') = 'SQL_ASCII'";

  private CustomTableCheck() {
  }

  static void verify(Connection c, CustomTable table) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(UNCHECKED_ENCODING); ResultSet rs = s.executeQuery()) {
      if (rs.next() && rs.getBoolean(1)) {
        throw new FollowerFailure("custom mode needs a source database encoded in UTF8 (or another encoding but"
            + " SQL_ASCII): this one is SQL_ASCII, whose rows PostgreSQL does not check, and one that is not"
            + " valid UTF-8 would stop the replication stream for good");
      }
    }
    String schema = table.schemaName();
    String name = table.tableName();
    String similar = null;
    boolean exists = false;
    try (PreparedStatement s = c.prepareStatement(TABLES)) {
      s.setString(1, schema);
      s.setString(2, name);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          if (rs.getString(1).equals(schema) && rs.getString(2).equals(name)) {
            exists = true;
          } else {
            similar = rs.getString(1).equals(schema) ? rs.getString(2) : rs.getString(1) + "." + rs.getString(2);
          }
        }
      }
    }
    if (!exists) {
      throw new FollowerFailure("custom.table \"" + table.table() + "\" does not exist in schema " + schema + hint(similar));
    }
    Map<String, Boolean> columns = columns(c, schema, name);
    for (Map.Entry<String, String> configured : table.columnsByKey().entrySet()) {
      String column = configured.getValue();
      if (Boolean.TRUE.equals(columns.get(column))) {
        throw new FollowerFailure(configured.getKey() + " \"" + column + "\" is a generated column of table "
            + Publication.quoted(schema) + "." + Publication.quoted(name) + ", which PostgreSQL does not publish");
      }
      if (!columns.containsKey(column)) {
        String sameIgnoringCase = columns.keySet().stream()
            .filter(existing -> existing.toLowerCase(Locale.ROOT).equals(column.toLowerCase(Locale.ROOT)))
            .findFirst().orElse(null);
        throw new FollowerFailure(configured.getKey() + " \"" + column + "\" does not exist in table "
            + Publication.quoted(schema) + "." + Publication.quoted(name) + hint(sameIgnoringCase));
      }
    }
  }

  private static String hint(String similar) {
    return similar == null ? " (names are case-sensitive)" : " (names are case-sensitive; did you mean " + similar + "?)";
  }

  /** Whether the table's updates can be published without failing the application's (see {@link #REPLICA_IDENTITY}). */
  static boolean updatesPublishable(Connection c, CustomTable table) throws SQLException {
    return ask(c, REPLICA_IDENTITY, table);
  }

  static boolean partitioned(Connection c, CustomTable table) throws SQLException {
    return ask(c, PARTITIONED, table);
  }

  private static boolean ask(Connection c, String question, CustomTable table) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(question)) {
      s.setString(1, table.schemaName());
      s.setString(2, table.tableName());
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  private static Map<String, Boolean> columns(Connection c, String schema, String name) throws SQLException {
    Map<String, Boolean> columns = new LinkedHashMap<>();
    try (PreparedStatement s = c.prepareStatement(COLUMNS)) {
      s.setString(1, schema);
      s.setString(2, name);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          columns.put(rs.getString(1), rs.getBoolean(2));
        }
      }
    }
    return columns;
  }
}
