package io.ackpoint.storage;

import io.ackpoint.AckpointError;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.Reached;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;

import java.util.List;
import java.util.NavigableMap;

/** {@link AcknowledgementHistory} of PostgreSQL storage. */
public final class PgAcknowledgementHistory implements AcknowledgementHistory {

  // COLLATE "C": positions compare as plain bytes, their replication order (as in MARK_PROCESSED).
  private static final String PROCESSED_FROM = """
      SELECT processed_at_lsn, user_id, client_id, write_checkpoint FROM ackpoint_write_checkpoints
       WHERE processed_at_lsn COLLATE "C" >= $1 COLLATE "C"
         AND ($2::text IS NULL OR processed_at_lsn COLLATE "C" <= $2 COLLATE "C")
      """;

  private static final String LATEST_PROCESSED =
      "SELECT coalesce(max(processed_at_lsn COLLATE \"C\"), '') FROM ackpoint_write_checkpoints";

  private final Pool pool;

  public PgAcknowledgementHistory(Pool pool) {
    this.pool = pool;
  }

  @Override
  public Future<NavigableMap<String, List<Reached>>> processedFrom(String from, String upTo) {
    return AckpointError.STORAGE_UNAVAILABLE.onFailure(pool.preparedQuery(PROCESSED_FROM).execute(Tuple.of(from, upTo)).map(rows -> {
      ProcessedRows processed = new ProcessedRows();
      for (Row row : rows) {
        processed.add(row.getString(0), new FullUserId(row.getString(1), row.getString(2)), row.getLong(3));
      }
      return processed.result();
    }));
  }

  @Override
  public Future<String> latestProcessed() {
    return AckpointError.STORAGE_UNAVAILABLE.onFailure(pool.preparedQuery(LATEST_PROCESSED).execute()
        .map(rows -> rows.iterator().next().getString(0)));
  }
}
