package io.ackpoint.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;

/**
 * The logical replication slots of the PostgreSQL server a bench runs on, read over JDBC ({@link PgJdbc}). Each
 * active slot has a walsender, and every walsender reads all of the server's WAL, other databases'
 * included: on a server shared by two services, each service's writes are read by both walsenders,
 * one of which a deployment of that service alone does not have.
 */
final class ReplicationSlots {

  private ReplicationSlots() {
  }

  /** The walsender's process id of each slot that one reads now, by slot name. */
  static Map<String, Long> walsenders(String uri) throws SQLException {
    Map<String, Long> active = new HashMap<>();
    try (Connection c = PgJdbc.connect(uri);
         ResultSet rs = c.createStatement().executeQuery(
             "SELECT slot_name, active_pid FROM pg_replication_slots WHERE active_pid IS NOT NULL")) {
      while (rs.next()) {
        active.put(rs.getString(1), rs.getLong(2));
      }
    }
    return active;
  }

  /**
   * Drops {@code slot} if it exists and nothing reads it, so that the service about to start it
   * again is measured from the end of the WAL: a slot left by an earlier run keeps its place, and
   * its walsender would spend the first minutes of the next run decoding what was written since
   * (measured: 1.8 GB behind, 54–64 ms of the walsender's CPU per 1,000 requests for the first
   * minute, against 8–9 once caught up). Returns how many bytes of WAL it was behind, or -1 if
   * there was no such slot.
   */
  static long dropIfIdle(String uri, String slot) throws SQLException {
    try (Connection c = PgJdbc.connect(uri);
         PreparedStatement drop = c.prepareStatement("""
             SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::int8, pg_drop_replication_slot(slot_name)
               FROM pg_replication_slots WHERE slot_name = ? AND NOT active""")) {
      drop.setString(1, slot);
      try (ResultSet rs = drop.executeQuery()) {
        return rs.next() ? rs.getLong(1) : -1;
      }
    }
  }
}
