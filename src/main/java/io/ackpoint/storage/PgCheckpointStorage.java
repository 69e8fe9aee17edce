package io.ackpoint.storage;

import io.ackpoint.AckpointError;
import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.CustomCheckpoint;
import io.ackpoint.core.CustomCheckpoints;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.GreatestIds;
import io.ackpoint.core.HeadedBatch;
import io.ackpoint.core.Reached;
import io.ackpoint.core.StoredBatch;
import io.ackpoint.core.WriteOutcome;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import static io.ackpoint.storage.PgStatements.COUNT;
import static io.ackpoint.storage.PgStatements.DELETE_EXPIRED;
import static io.ackpoint.storage.PgStatements.LATEST_ACKNOWLEDGED;
import static io.ackpoint.storage.PgStatements.MARK_PROCESSED;
import static io.ackpoint.storage.PgStatements.HAS_UNIQUE_KEY;
import static io.ackpoint.storage.PgStatements.STORE_BATCH;
import static io.ackpoint.storage.PgStatements.UPSERT_BATCH;
import static io.ackpoint.storage.PgStatements.STORE_CUSTOM;
import static io.ackpoint.storage.PgStatements.UPSERT_CUSTOM;

/**
 * Write checkpoints in PostgreSQL. A batch is one prepared statement (two in turn when a user asks
 * for a generated and a supplied id at once) that takes its rows in key order, so concurrent batches
 * that share users queue up instead of deadlocking: an upsert on a table with its unique key
 * ({@link PgStatements#UPSERT_BATCH}), the older statement that locks the rows before it updates
 * them on a table without ({@link PgStatements#STORE_BATCH}). When
 * the source is this same database, the statement also reads the head, and writes the source's
 * marker in its transaction ({@link #atCurrentHeadMarkedWithin}). Pending rows are found through
 * their own queue, written by the same statements (see {@link PgStatements}), so that both updates
 * of a row are HOT.
 */
public final class PgCheckpointStorage implements CheckpointStorage {

  /**
   * A user can be missing from the answer only when a concurrent batch created its row after this
   * statement's snapshot was taken; the next attempt sees and locks that row. Each attempt only
   * carries the users still missing, so this ends quickly even under contention.
   */
  private static final int MAX_ATTEMPTS = 4;

  /** Rows per statement when the pending queue is rebuilt. */
  static final int REBUILD_WINDOW = 10_000;


  private final Pool pool;
  private final PendingQueueVacuum vacuum;
  private final PendingQueueRebuild rebuild;
  private final int customChunk;
  private final int markWindow;
  /** Whether this database is the source's too: see {@link PgStatements#MARK_PROCESSED} ({@code $3}). */
  private volatile boolean sourceIsThisDatabase;
  /** Whether the table has its unique key, once known; asked again after a failure. */
  private volatile Future<Boolean> keyed;

  public PgCheckpointStorage(Pool pool) {
    this(pool, REBUILD_WINDOW, CustomCheckpoints.PER_STATEMENT);
  }

  PgCheckpointStorage(Pool pool, int rebuildWindow) {
    this(pool, rebuildWindow, CustomCheckpoints.PER_STATEMENT);
  }

  PgCheckpointStorage(Pool pool, int rebuildWindow, int customChunk) {
    this.pool = pool;
    this.customChunk = customChunk;
    // Rows marked per statement: the same bound as a window of the queue's rebuild.
    this.markWindow = rebuildWindow;
    this.vacuum = new PendingQueueVacuum(pool);
    this.rebuild = new PendingQueueRebuild(pool, rebuildWindow);
  }

  /**
   * A storage that writes every batch with {@link PgStatements#STORE_BATCH}, as on an install
   * without the unique key: the tests run the storage contract through that statement too.
   */
  static PgCheckpointStorage withoutUpsert(Pool pool) {
    PgCheckpointStorage storage = new PgCheckpointStorage(pool);
    storage.keyed = Future.succeededFuture(false);
    return storage;
  }

  @Override
  public Future<StoredBatch> store(String head, List<CheckpointWrite> writes) {
    return withKey(keyed -> keyed
            ? SuppliedAfterGenerated.store(writes, part -> storeAt(head, part, true),
                (first, second) -> first.plus(second, SuppliedAfterGenerated::merge))
            : storeAt(head, writes, false))
        .recover(e -> Future.failedFuture(storeFailure(e)));
  }

  private Future<StoredBatch> storeAt(String head, List<CheckpointWrite> writes, boolean upsert) {
    if (upsert) {
      return Attempts.run(writes, MAX_ATTEMPTS, attempt -> attempt(pool, UPSERT_BATCH, true, attempt, head,
          new LatestHead(), new LatestHead()));
    }
    return pool.withTransaction(conn -> lockUsers(conn, writes).compose(locked -> Attempts.run(writes, MAX_ATTEMPTS,
        attempt -> attempt(conn, STORE_BATCH, false, attempt, head, new LatestHead(), new LatestHead()))));
  }

  /** {@link PgStatements#LOCK_USERS}: before the statements of a table without its unique key, in their transaction. */
  private static Future<Void> lockUsers(SqlConnection conn, List<CheckpointWrite> writes) {
    return lockUsers(conn, writes.stream().map(w -> w.user().userId()).toArray(String[]::new),
        writes.stream().map(w -> w.user().clientId()).toArray(String[]::new));
  }

  private static Future<Void> lockUsers(SqlConnection conn, String[] users, String[] clients) {
    return conn.preparedQuery(PgStatements.LOCK_USERS)
        .execute(Tuple.tuple().addArrayOfString(users).addArrayOfString(clients)).mapEmpty();
  }

  /**
   * Runs {@code store} knowing whether the table has its unique key. No migration drops the key, but
   * an operator may: the upsert then fails ({@code 42P10}), this batch (or chunk of custom
   * checkpoints, which is idempotent) is stored again with {@link PgStatements#STORE_BATCH} (or
   * {@link PgStatements#STORE_CUSTOM}), and the next one asks for the key again (it may have been
   * built again). The failed statement wrote nothing, but an attempt or a turn of this batch before
   * it may have committed: its generated users are then raised once more, which leaves an id unused
   * (ids need only grow; its queue entry is acknowledged like any other).
   */
  private <T> Future<T> withKey(Function<Boolean, Future<T>> store) {
    return keyed().compose(keyed -> store.apply(keyed).recover(e -> {
      if (keyed && e instanceof PgException pg && "42P10".equals(pg.getSqlState())) {
        this.keyed = null;
        return store.apply(false);
      }
      return Future.failedFuture(e);
    }));
  }

  /**
   * Whether the table has its unique key. Read once, and again after a failure or a lost key: only a
   * migration adds the key, and it runs before storage is used; an install that held duplicate rows
   * never gets it.
   */
  private Future<Boolean> keyed() {
    Future<Boolean> known = keyed;
    if (known == null || known.failed()) {
      known = pool.query(HAS_UNIQUE_KEY).execute().map(rows -> rows.iterator().next().getBoolean(0));
      keyed = known;
    }
    return known;
  }

  /**
   * This storage as a {@link HeadStoringWriter}, when the source is this storage's database (the
   * caller knows): each statement reads the head itself and writes the source's marker inside its
   * own transaction with {@code markerCall} (an SQL call that writes one and answers its position),
   * if the batch left a checkpoint pending or the pending queue lost its proof of completeness.
   * Head, rows and marker: one round trip, one commit ({@link HeadStoringWriter} says why that is
   * enough); on a table without its unique key, one commit of a transaction that takes its users'
   * locks first ({@link PgStatements#LOCK_USERS}). From then on, an acknowledgement statement also checks its position against this
   * database's head ({@link SourceBehindException}).
   */
  public HeadStoringWriter atCurrentHeadMarkedWithin(String markerCall) {
    sourceIsThisDatabase = true;
    String store = PgStatements.storeBatchAtCurrentHead(markerCall);
    String upsert = PgStatements.upsertBatchAtCurrentHead(markerCall);
    return writes -> withKey(keyed -> keyed
            ? pool.withConnection(conn -> SuppliedAfterGenerated.store(writes, part -> storeAtCurrentHead(conn, part, upsert, true),
                (first, second) -> first.plus(second, SuppliedAfterGenerated::merge)))
            : pool.withTransaction(conn -> lockUsers(conn, writes).compose(locked -> storeAtCurrentHead(conn, writes, store, false))))
        .recover(e -> Future.failedFuture(storeFailure(e)));
  }

  private static Future<HeadedBatch> storeAtCurrentHead(SqlConnection conn, List<CheckpointWrite> writes, String sql,
                                                        boolean upsert) {
    LatestHead head = new LatestHead();
    LatestHead marker = new LatestHead();
    return Attempts.run(writes, MAX_ATTEMPTS, attempt -> attempt(conn, sql, upsert, attempt, null, head, marker))
        .map(stored -> new HeadedBatch(head.value, stored, marker.value.isEmpty() ? null : marker.value));
  }

  /** The latest position the attempts of one batch stored at (or marked at); it stands for all of them (see {@link HeadedBatch#plus}). */
  private static final class LatestHead {
    String value = "";

    void seen(String position) {
      if (position != null && position.compareTo(value) > 0) {
        value = position;
      }
    }
  }

  /**
   * One attempt of {@code sql} at {@code head}, or at the current head when it is null; {@code upsert}:
   * an {@link PgStatements#UPSERT_BATCH}, whose writes are each generated or supplied, not both.
   * {@code heads} and {@code markers} learn the head the statement stored at and the marker it wrote.
   */
  private static Future<Attempts.Attempt> attempt(SqlClient client, String sql, boolean upsert, List<CheckpointWrite> writes,
                                                  String head, LatestHead heads, LatestHead markers) {
    int n = writes.size();
    String[] users = new String[n];
    String[] clients = new String[n];
    Long[] requested = new Long[n];
    for (int i = 0; i < n; i++) {
      CheckpointWrite w = writes.get(i);
      users[i] = w.user().userId();
      clients[i] = w.user().clientId();
      requested[i] = w.requestedId();
    }
    Tuple params = Tuple.of(users, clients, requested);
    if (!upsert) {
      // The upsert tells a generated write by its supplied id alone (null), STORE_BATCH by a flag.
      params.addValue(writes.stream().map(CheckpointWrite::generated).toArray(Boolean[]::new));
    }
    if (head != null) {
      params.addValue(head);
    }
    return client.preparedQuery(sql).execute(params).map(rows -> {
      Map<FullUserId, WriteOutcome> outcomes = new HashMap<>();
      boolean anyPending = false;
      for (Row row : rows) {
        FullUserId user = new FullUserId(row.getString(0), row.getString(1));
        long checkpoint = row.getLong(2);
        boolean userPending = row.getBoolean(3);
        anyPending |= userPending;
        Long generatedId = row.getLong(4);
        outcomes.put(user, row.getBoolean(5)
            ? new WriteOutcome.Exhausted(checkpoint, userPending)
            : new WriteOutcome.Stored(checkpoint, generatedId == null ? 0 : generatedId, userPending, row.getString(6)));
        heads.seen(row.getString(7));
        markers.seen(row.getString(8));
      }
      List<CheckpointWrite> missing = new ArrayList<>();
      for (CheckpointWrite w : writes) {
        if (!outcomes.containsKey(w.user())) {
          missing.add(w);
        }
      }
      return new Attempts.Attempt(outcomes, anyPending, missing);
    });
  }

  /**
   * A refusal of the data itself (SQLSTATE classes 22, data exception, and 54, program limit
   * exceeded) says nothing about the database's health or about other users' writes.
   */
  private static RuntimeException storeFailure(Throwable e) {
    if (e instanceof PgException pg && pg.getSqlState() != null
        && (pg.getSqlState().startsWith("22") || pg.getSqlState().startsWith("54"))) {
      return new RejectedWriteException(pg.getErrorMessage() + " (" + pg.getSqlState() + ")", e);
    }
    return AckpointError.STORAGE_UNAVAILABLE.exception(e);
  }

  /** Any other failure of a statement: storage is unavailable, as the caller will say. */
  private static <T> Future<T> guarded(Future<T> statement) {
    return AckpointError.STORAGE_UNAVAILABLE.onFailure(statement);
  }

  /**
   * A transaction may carry any number of custom checkpoints: each chunk of users
   * ({@link CustomCheckpoints#PER_STATEMENT}) is a statement of its own
   * ({@link CustomCheckpoints#storeInChunks}); none is acknowledged early: their head is the
   * commit's position, which reaches the engine only after the last chunk.
   */
  @Override
  public Future<Void> storeCustom(String position, List<CustomCheckpoint> checkpoints) {
    return CustomCheckpoints.storeInChunks(checkpoints, customChunk, chunk -> storeCustomChunk(position, chunk));
  }

  private Future<Void> storeCustomChunk(String position, List<CustomCheckpoint> latest) {
    int n = latest.size();
    String[] users = new String[n];
    String[] clients = new String[n];
    Long[] ids = new Long[n];
    Boolean[] requests = new Boolean[n];
    int i = 0;
    for (CustomCheckpoint c : latest) {
      users[i] = c.user().userId();
      clients[i] = c.user().clientId();
      ids[i] = c.checkpoint();
      requests[i++] = c.request();
    }
    Tuple params = Tuple.of(users, clients, ids, requests, new JsonObject().put("1", position));
    return guarded(withKey(keyed -> keyed ? pool.preparedQuery(UPSERT_CUSTOM).execute(params)
        : pool.withTransaction(conn -> lockUsers(conn, users, clients).compose(locked -> conn.preparedQuery(STORE_CUSTOM).execute(params))))
        .mapEmpty());
  }

  @Override
  public Future<List<Reached>> markProcessed(String position) {
    return markQueued(position).compose(reached -> reached != null ? Future.succeededFuture(reached) : rebuildAndMark(position));
  }

  /** After a crash of the server emptied the pending queue (see {@link PgStatements#REBUILD_END}). */
  private Future<List<Reached>> rebuildAndMark(String position) {
    return guarded(rebuild.run()
        .compose(rebuilt -> markQueued(position))
        .compose(reached -> reached != null ? Future.succeededFuture(reached)
            : Future.failedFuture(new IllegalStateException("the pending queue was emptied again right after it was rebuilt"))));
  }

  /** The users acknowledged at {@code position}, or {@code null} if the pending queue must be rebuilt first. */
  private Future<List<Reached>> markQueued(String position) {
    GreatestIds reached = new GreatestIds();
    return markWindow(position, reached, false).map(complete -> complete ? reached.reached() : null).onSuccess(all -> {
      if (all != null) {
        vacuum.dequeued();
      }
    });
  }

  /**
   * One statement of {@link PgStatements#MARK_PROCESSED}, then the next while each takes its full
   * count of entries; a user marked by two keeps its greatest id. Answers whether the queue was
   * complete. A failure after a statement committed says that some rows may be marked.
   */
  private Future<Boolean> markWindow(String position, GreatestIds reached, boolean marked) {
    return pool.preparedQuery(MARK_PROCESSED).execute(Tuple.of(position, markWindow, sourceIsThisDatabase)).transform(ar -> {
      if (ar.failed()) {
        return Future.failedFuture(marked ? new PartlyMarkedException(ar.cause()) : AckpointError.STORAGE_UNAVAILABLE.exception(ar.cause()));
      }
      Long taken = null;
      String head = null;
      for (Row row : ar.result()) {
        // Only the last row, the count's, has no client id (a stored one is at least "").
        if (row.getString(1) == null) {
          taken = row.getLong(2);
          head = row.getString(0);
        } else {
          reached.add(new FullUserId(row.getString(0), row.getString(1)), row.getLong(2));
        }
      }
      if (taken != null && taken < 0) {
        SourceBehindException behind = new SourceBehindException(position, head);
        return Future.failedFuture(marked ? new PartlyMarkedException(behind) : behind);
      }
      if (taken == null) {
        return Future.succeededFuture(false);
      }
      return taken < markWindow ? Future.succeededFuture(true) : markWindow(position, reached, true);
    });
  }

  /**
   * An ERROR answered to the statement aborted its transaction (a timeout, a lock or serialization
   * failure): nothing was marked. A FATAL one ends the session, perhaps after the commit, as does a
   * lost connection.
   */
  @Override
  public boolean mayHaveMarked(Throwable failure) {
    for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
      if (cause instanceof PartlyMarkedException) {
        return true;
      }
      if (cause instanceof SourceBehindException) {
        return false;
      }
      if (cause instanceof PgException pg) {
        return !"ERROR".equals(pg.getSeverity());
      }
    }
    return true;
  }

  @Override
  public Future<Acknowledged> latestAcknowledged(FullUserId user) {
    return guarded(pool.preparedQuery(LATEST_ACKNOWLEDGED).execute(Tuple.of(user.userId(), user.clientId()))
        .map(rows -> {
          if (rows.size() == 0) {
            return null;
          }
          Row row = rows.iterator().next();
          return new Acknowledged(row.getLong(0), row.getString(1));
        }));
  }

  @Override
  public Future<CompactionStep> deleteExpiredRequests(Instant requestedBefore, int limit, long from) {
    return guarded(pool.preparedQuery(DELETE_EXPIRED)
        .execute(Tuple.of(OffsetDateTime.ofInstant(requestedBefore, ZoneOffset.UTC), limit, from))
        .map(rows -> {
          Row row = rows.iterator().next();
          return new CompactionStep(row.getLong(0).intValue(), row.getLong(1));
        }));
  }

  @Override
  public Future<Long> count() {
    return guarded(pool.preparedQuery(COUNT).execute().map(rows -> rows.iterator().next().getLong(0)));
  }

  @Override
  public Future<Void> ping() {
    return guarded(pool.query("SELECT current_setting('transaction_read_only') = 'on'").execute())
        .compose(rows -> rows.iterator().next().getBoolean(0)
            ? Future.failedFuture(new ReadOnlyStorageException()) : Future.succeededFuture());
  }

  /** Marking failed after some of its statements committed: rows are marked that nobody was told of. */
  private static final class PartlyMarkedException extends RuntimeException {
    PartlyMarkedException(Throwable cause) {
      super(AckpointError.STORAGE_UNAVAILABLE.exception(cause).getMessage(), cause);
    }
  }
}
