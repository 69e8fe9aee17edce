package io.ackpoint.source;

import io.ackpoint.core.CustomCheckpoint;
import io.ackpoint.core.FullUserId;
import io.ackpoint.config.AckpointConfig.CustomTable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the pgoutput messages (protocol version 1) the follower needs: transaction boundaries in
 * every mode, and in custom checkpoint mode relations, inserts and updates of the custom table. Table and column names are compared
 * exactly (case-sensitive), as configured. Rows of a transaction are handed over at its
 * commit, with the commit's end position, so that a checkpoint is never acknowledged before the
 * transaction that wrote it is visible.
 */
final class PgOutputDecoder {

  private static final Logger LOG = LoggerFactory.getLogger(PgOutputDecoder.class);

  /** A committed transaction's custom checkpoints and the position just after its commit. */
  record Committed(String position, List<CustomCheckpoint> checkpoints) {
  }

  /** {@code missing}: a configured custom-table column this table lacks, or null. */
  private record Relation(String schema, String name, List<String> columns, String missing) {
  }

  /**
   * A row's text values (null for SQL NULL), and which columns it leaves out as unchanged: an update
   * carries no value stored out of line (TOAST) that it did not change.
   */
  private record Tuple(List<String> values, BitSet unchanged) {

    /**
     * This new row of an update, its unchanged columns taken from the old row where that carries them:
     * the whole row under REPLICA IDENTITY FULL, the key's columns when the key holds a value stored
     * out of line.
     */
    Tuple filledFrom(Tuple old) {
      if (old == null || unchanged.isEmpty()) {
        return this;
      }
      List<String> filled = new ArrayList<>(values);
      BitSet stillUnchanged = (BitSet) unchanged.clone();
      for (int i = unchanged.nextSetBit(0); i >= 0 && i < old.values.size(); i = unchanged.nextSetBit(i + 1)) {
        if (old.values.get(i) != null && !old.unchanged.get(i)) {
          filled.set(i, old.values.get(i));
          stillUnchanged.clear(i);
        }
      }
      return new Tuple(filled, stillUnchanged);
    }
  }

  /** The custom checkpoint table; null in managed mode, where only transaction boundaries matter. */
  private final CustomTable table;
  /** The configured columns of the custom table, once (none without one). */
  private final Collection<String> configured;
  private final Map<Integer, Relation> relations = new HashMap<>();
  private final List<CustomCheckpoint> transaction = new ArrayList<>();
  /** Between a transaction's begin and its commit. */
  private boolean open;

  PgOutputDecoder(CustomTable table) {
    this.table = table;
    this.configured = table == null ? List.of() : List.copyOf(table.columnsByKey().values());
  }

  /** Answers the committed custom checkpoints when {@code message} is a commit that carried any. */
  Committed decode(ByteBuffer message) {
    byte type = message.get();
    switch (type) {
      case 'R' -> relation(message);
      case 'B' -> {
        transaction.clear();
        open = true;
      }
      case 'I' -> {
        Relation relation = relations.get(message.getInt());
        message.get(); // 'N'
        row(relation, tuple(message));
      }
      case 'U' -> {
        Relation relation = relations.get(message.getInt());
        byte kind = message.get();
        Tuple old = null;
        if (kind == 'K' || kind == 'O') {
          old = tuple(message);
          message.get(); // 'N'
        }
        row(relation, tuple(message).filledFrom(old));
      }
      case 'C' -> {
        message.get(); // flags
        message.getLong(); // commit position
        long end = message.getLong();
        open = false;
        if (!transaction.isEmpty()) {
          Committed committed = new Committed(Lsn.format(end), List.copyOf(transaction));
          transaction.clear();
          return committed;
        }
      }
      default -> {
        // messages (markers), deletes, truncates, types, origins: nothing to collect
      }
    }
    return null;
  }

  /** True between a transaction's begin and its commit: no position inside it may be confirmed. */
  boolean inTransaction() {
    return open;
  }

  private void relation(ByteBuffer message) {
    int id = message.getInt();
    String schema = string(message);
    String name = string(message);
    message.get(); // replica identity
    int count = message.getShort();
    List<String> columns = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      message.get(); // flags
      columns.add(string(message));
      message.getInt(); // type
      message.getInt(); // modifier
    }
    // Once per relation message (PostgreSQL sends one again after every change of the table), not per row.
    String missing = configured.stream()
        .filter(column -> !columns.contains(column)).findFirst().orElse(null);
    relations.put(id, new Relation(schema, name, columns, missing));
  }

  /** Exact names, as configured: the publication was given the same quoted, case-sensitive name. */
  private boolean isCustomTable(Relation relation) {
    return table != null && relation != null && relation.schema().equals(table.schemaName()) && relation.name().equals(table.tableName());
  }

  private void row(Relation relation, Tuple tuple) {
    if (!isCustomTable(relation)) {
      return;
    }
    if (relation.missing() != null) {
      // Renamed, dropped or made generated while followed (until the follower's next check stops
      // it): a row without the client column must not be taken for one without a client.
      LOG.warn("ignoring a custom checkpoint row: {} has no column {} (renamed, dropped or generated?)", table.table(), relation.missing());
      return;
    }
    Map<String, String> row = new HashMap<>();
    List<String> values = tuple.values();
    for (int i = 0; i < relation.columns().size() && i < values.size(); i++) {
      row.put(relation.columns().get(i), values.get(i));
      if (tuple.unchanged().get(i) && configured.contains(relation.columns().get(i))) {
        LOG.warn("ignoring an update of a custom checkpoint row: its {} is stored out of line (TOAST) and was not changed,"
            + " so PostgreSQL did not send it; give {} REPLICA IDENTITY FULL (a partitioned table: each partition) to have it sent",
            relation.columns().get(i),
            table.table());
        return;
      }
    }
    String user = row.get(table.userColumn());
    String checkpoint = row.get(table.checkpointColumn());
    if (user == null || user.isEmpty() || checkpoint == null) {
      LOG.warn("ignoring a custom checkpoint row without {} or {}", table.userColumn(), table.checkpointColumn());
      return;
    }
    long id;
    try {
      // The digits 0-9 alone, as the HTTP API takes ids: parseLong also takes a sign and other
      // scripts' digits, which a text column may hold.
      if (!checkpoint.chars().allMatch(c -> c >= '0' && c <= '9')) {
        throw new NumberFormatException();
      }
      id = Long.parseLong(checkpoint);
    } catch (NumberFormatException e) {
      LOG.warn("ignoring a custom checkpoint row whose {} is not an integer of the digits 0-9", table.checkpointColumn());
      return;
    }
    String client = table.clientColumn() == null ? null : row.get(table.clientColumn());
    // A row no client could ever ask about is skipped, not stored: one such row must not stop the
    // stream for every other row after it.
    String problem = id < 1 ? table.checkpointColumn() + " must be at least 1"
        : FullUserId.userIdProblem(user) != null ? table.userColumn() + " " + FullUserId.userIdProblem(user)
        : client != null && FullUserId.clientIdProblem(client) != null ? table.clientColumn() + " " + FullUserId.clientIdProblem(client)
        : null;
    if (problem != null) {
      LOG.warn("ignoring a custom checkpoint row: {}", problem);
      return;
    }
    boolean request = table.requestColumn() != null && "t".equals(row.get(table.requestColumn()));
    transaction.add(new CustomCheckpoint(new FullUserId(user, client), id, request));
  }

  private static Tuple tuple(ByteBuffer message) {
    int count = message.getShort();
    List<String> values = new ArrayList<>(count);
    BitSet unchanged = new BitSet();
    for (int i = 0; i < count; i++) {
      byte kind = message.get();
      if (kind == 't' || kind == 'b') {
        byte[] bytes = new byte[message.getInt()];
        message.get(bytes);
        values.add(new String(bytes, StandardCharsets.UTF_8));
      } else {
        if (kind == 'u') {
          unchanged.set(i);
        }
        values.add(null);
      }
    }
    return new Tuple(values, unchanged);
  }

  private static String string(ByteBuffer message) {
    int start = message.position();
    while (message.get() != 0) {
      // scan to the terminating zero
    }
    byte[] bytes = new byte[message.position() - start - 1];
    message.position(start);
    message.get(bytes);
    message.get();
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
