package io.ackpoint.source;

import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

import java.sql.SQLException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Words why the follower's stream failed as one line an operator can act on, from PostgreSQL's
 * SQLSTATE: the readiness reason and the log line are this text. A cause that retrying cannot cure
 * (another process on the slot, a missing privilege, wal_level) is named with what to change.
 */
final class ReplicationFailures {

  private static final Pattern ACTIVE_PID = Pattern.compile("is active for PID (\\d+)");

  private final String slot;
  private final String role;
  private final String publication;
  private final boolean custom;

  ReplicationFailures(String slot, String role, String publication, boolean custom) {
    this.slot = slot;
    this.role = role;
    this.publication = publication;
    this.custom = custom;
  }

  /**
   * Whether the stream failed because the publication it names was dropped: the walsender decodes
   * each change with the catalog as it was when the change was written, so one written while the
   * publication did not exist fails every time, at the same position, even once the publication is
   * there again (the follower creates it at each connect). Only a new slot goes on.
   */
  boolean publicationDropped(Throwable failure) {
    // By its name, which the server quotes in whatever language it speaks (lc_messages).
    return failure instanceof SQLException sql && "42704".equals(sql.getSQLState())
        && oneLine(failure).contains("\"" + publication + "\"");
  }

  String reason(Throwable failure) {
    if (failure instanceof FollowerFailure worded) {
      return worded.getMessage();
    }
    String message = oneLine(failure);
    String state = failure instanceof SQLException sql ? sql.getSQLState() : null;
    if (state == null) {
      return "replication stream lost: " + message;
    }
    return switch (state) {
      case "55006" -> slotInUse(message);
      case "42501" -> missingPrivilege(message);
      case "55000" -> "the source is not ready for logical replication: " + message
          + (message.contains("wal_level") ? " (set wal_level = logical in postgresql.conf and restart PostgreSQL)" : "");
      case "53400", "53300" -> "the source has no room for the follower: " + message
          + " (raise max_replication_slots or max_wal_senders, or drop unused slots and connections)";
      case "28000", "28P01" -> "the source refused the follower's login as \"" + role + "\": " + message
          + " (pg_hba.conf must allow a replication connection for this role, and the password must match)";
      case "42P01" -> "a table the follower needs does not exist: " + message;
      case "42704" -> publicationDropped(failure)
          ? "the publication was dropped while the slot followed it, and the slot cannot decode past that moment: "
          + message + (custom ? " (in custom mode the slot is kept, since what it has not decoded may hold custom checkpoints:"
          + " drop the slot \"" + slot + "\" by hand, and whatever custom checkpoints it had not sent are lost)"
          : " (the slot is dropped and created again)")
          : "replication stream lost: " + message + " (SQLSTATE " + state + ")";
      default -> (state.startsWith("08") ? "cannot reach the source for replication: " : "replication stream lost: ")
          + message + " (SQLSTATE " + state + ")";
    };
  }

  /**
   * Whether the follower could not reach the source at all: no connection (SQLSTATE class 08), or a
   * stream lost without an answer from the server (silent past its limit, a broken socket), as
   * opposed to a server that answered and refused.
   */
  static boolean cutOff(Throwable failure) {
    if (failure instanceof FollowerFailure) {
      return false;
    }
    String state = failure instanceof SQLException sql ? sql.getSQLState() : null;
    return state == null || state.startsWith("08");
  }

  private String slotInUse(String message) {
    Matcher pid = ACTIVE_PID.matcher(message);
    return "replication slot \"" + slot + "\" is in use by another process"
        + (pid.find() ? " (pid " + pid.group(1) + ")" : " (" + message + ")")
        + ": is another Ackpoint running on this slot? Give each deployment its own replication.slot_name";
  }

  private String missingPrivilege(String message) {
    if (message.contains("WAL sender") || message.contains("REPLICATION") || message.contains("replication")) {
      return "the source role \"" + role + "\" lacks the REPLICATION attribute that logical replication needs"
          + " (ALTER ROLE " + role + " REPLICATION): " + message;
    }
    return "the source role \"" + role + "\" lacks a privilege the follower needs: " + message
        + " (it needs CREATE on the database to create the publication, and in custom mode to own the publication"
        + " and the custom table to publish it)";
  }

  /** The server's message and detail on one line, without the driver's layout or a stack trace. */
  static String oneLine(Throwable failure) {
    if (failure instanceof PSQLException psql && psql.getServerErrorMessage() != null) {
      ServerErrorMessage server = psql.getServerErrorMessage();
      String detail = server.getDetail();
      return server.getMessage() + (detail == null ? "" : " (" + detail + ")");
    }
    String message = failure.getMessage() == null ? failure.getClass().getSimpleName() : failure.getMessage();
    return message.replaceAll("\\s*\\R\\s*", " ").trim();
  }
}
