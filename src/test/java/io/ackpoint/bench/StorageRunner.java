package io.ackpoint.bench;

import io.ackpoint.config.AckpointConfig.DatabaseConfig;
import io.ackpoint.config.AckpointConfig.DatabaseType;
import io.ackpoint.config.AckpointConfig.EmbeddedConfig;
import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.FullUserId;
import io.ackpoint.embedded.EmbeddedDatabase;
import io.ackpoint.impl.PgPools;
import io.ackpoint.source.PgReplicationSource;
import io.ackpoint.storage.HeadStoringWriter;
import io.ackpoint.storage.PgCheckpointStorage;
import io.ackpoint.storage.PgMigrations;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;

/**
 * {@code scripts/bench --storage}: what PostgreSQL spends on storage alone, per batch and per
 * checkpoint, beside a yardstick, as {@code GET /whoami} is the yardstick of the HTTP side. One
 * client runs batches back to back, each followed by its acknowledgement, with no HTTP, no
 * replication stream and no other load; the server's CPU (postmaster and backends, from /proc)
 * divided by the batches is the storage's own cost, free of the HTTP side and of wrk, which share
 * the cores with the database in the service's cases.
 *
 * <p>The two loops, alternated A, B, A, B on one server, on the same users and batch sizes:
 * <ul>
 * <li>Ackpoint: {@link PgCheckpointStorage} as a standalone service runs it on one database (the
 * batch statement at the current head with the marker in its transaction, then the
 * acknowledgement statement at the marker's position);
 * <li>the yardstick: a plain {@code UPDATE} of the batch's rows in a table of the same shape (new id
 * and head, nothing else decided), the same marker in its transaction, and an acknowledgement that writes one row
 * (the position reached). What a design costs that writes each checkpoint once and records
 * progress once per position, with the same statements and flushes per batch; not a correct
 * storage (nothing is locked in order, nothing is answered per user, no row is ever pending).
 * </ul>
 * Sequential, so it leaves out what the service adds around the statements: batches overlapping
 * acknowledgements, coalesced positions, the walsender.
 */
public final class StorageRunner {

  /**
   * Rows in the table. Not the thousand users of the wrk cases: on a table that small the generic
   * plans read it whole rather than look each row up by its key, as a deployment of more than a few
   * thousand users does.
   */
  static final int USERS = 10_000;
  static final int[] BATCH_SIZES = {1, 32, 122};
  private static final int WARM_UP_SECONDS = 2;

  private static final String YARDSTICK_TABLE = "ackpoint_bench_yardstick";
  private static final String YARDSTICK_POSITION = "ackpoint_bench_yardstick_position";
  private static final String YARDSTICK_WRITE = """
      WITH written AS (
        UPDATE %s c
           SET write_checkpoint = c.write_checkpoint + 1, lsns = jsonb_build_object('1', pg_current_wal_lsn()::text),
               checkpoint_requested_at = now()
          FROM unnest($1::text[], $2::text[]) r(user_id, client_id)
         WHERE c.user_id = r.user_id AND c.client_id = r.client_id
        RETURNING c.user_id, c.client_id, c.write_checkpoint
      )
      SELECT (%s)::text FROM (SELECT count(*) FROM written) w
      """.formatted(YARDSTICK_TABLE, PgReplicationSource.MARKER_IN_TRANSACTION);
  private static final String YARDSTICK_ACKNOWLEDGE = "UPDATE %s SET position = $1".formatted(YARDSTICK_POSITION);

  record Sample(long batches, double serverCpuSeconds) {
    double msPerBatch() {
      return serverCpuSeconds * 1000 / batches;
    }
  }

  private final Pool pool;
  private final long postmasterPid;
  private final PgCheckpointStorage storage;
  private final HeadStoringWriter writer;
  private final List<FullUserId> users = new ArrayList<>();
  private final Random random = new Random(1);
  /** Set once the bench has written into the database, which it then cleans up. */
  private boolean prepared;

  private StorageRunner(Pool pool, long postmasterPid) {
    this.pool = pool;
    this.postmasterPid = postmasterPid;
    this.storage = new PgCheckpointStorage(pool);
    // As a standalone service wires storage and source on one database (Backends).
    this.writer = storage.atCurrentHeadMarkedWithin(PgReplicationSource.MARKER_IN_TRANSACTION);
    for (int i = 0; i < USERS; i++) {
      users.add(FullUserId.of("bench-user-" + i, "bench"));
    }
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> a = Options.parse(args);
    if (a.containsKey("uri") != a.containsKey("postmaster-pid")) {
      throw new IllegalArgumentException("--uri (a scratch database: the bench writes its own users into Ackpoint's tables there)"
          + " and --postmaster-pid (its server's postmaster, whose CPU is measured) go together");
    }
    int seconds = Integer.parseInt(a.getOrDefault("duration", "5"));
    int rounds = Integer.parseInt(a.getOrDefault("rounds", "3"));
    Path out = Path.of(a.getOrDefault("out", "docs/bench/storage.md"));
    EmbeddedDatabase embedded = null;
    String uri = a.get("uri");
    long postmasterPid;
    if (uri == null) {
      Path dir = Files.createTempDirectory("ackpoint-storage-bench");
      embedded = EmbeddedDatabase.start(new EmbeddedConfig(dir, 0));
      uri = embedded.uri();
      postmasterPid = embedded.postmaster().map(ProcessHandle::pid)
          .orElseThrow(() -> new IllegalStateException("the embedded PostgreSQL's postmaster was not found"));
    } else {
      postmasterPid = Long.parseLong(a.get("postmaster-pid"));
    }
    if (ProcessHandle.of(postmasterPid).isEmpty()) {
      throw new IllegalArgumentException("no process " + postmasterPid + " on this machine: the server's CPU could not be measured");
    }
    Vertx vertx = Vertx.vertx();
    // The service's own pool: prepared statements cached per connection, durable commits.
    Pool pool = PgPools.create(vertx, new DatabaseConfig(DatabaseType.POSTGRESQL, uri, 2, Duration.ofSeconds(10), Duration.ofSeconds(30)),
        "ackpoint-storage-bench");
    StorageRunner bench = new StorageRunner(pool, postmasterPid);
    try {
      String version = await(pool.query("SHOW server_version").execute().map(rows -> rows.iterator().next().getString(0)));
      bench.prepare();
      StringBuilder md = new StringBuilder("# Storage alone: PostgreSQL's CPU per batch\n\n");
      md.append(String.format(Locale.ROOT, "`scripts/bench --storage%s`, %s, PostgreSQL %s (%s), %d cores. One client "
              + "runs batches back to back, each followed by its acknowledgement; a table of %,d users, each batch that many of them "
              + "drawn at random; %d s per run after %d s of warm-up, %d rounds alternated A, B, A, B on one server. CPU: the "
              + "server's postmaster and backends from /proc (no replication slot is read: the walsender's share is not in these "
              + "figures).%n%n",
          options(a), Instant.now(), version, a.containsKey("uri") ? "the server given" : "embedded default",
          Runtime.getRuntime().availableProcessors(), USERS, seconds, WARM_UP_SECONDS, rounds));
      md.append("| checkpoints per batch | Ackpoint, ms per batch | yardstick, ms per batch | Ackpoint, µs per checkpoint "
          + "| yardstick, µs per checkpoint | yardstick / Ackpoint |\n|---|---|---|---|---|---|\n");
      for (int size : BATCH_SIZES) {
        bench.run("ackpoint", size, WARM_UP_SECONDS, bench::storeAndAcknowledge);
        bench.run("yardstick", size, WARM_UP_SECONDS, bench::yardstickBatch);
        List<Sample> ackpoint = new ArrayList<>();
        List<Sample> yardstick = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
          ackpoint.add(bench.run("ackpoint", size, seconds, bench::storeAndAcknowledge));
          yardstick.add(bench.run("yardstick", size, seconds, bench::yardstickBatch));
        }
        double mine = mean(ackpoint);
        double least = mean(yardstick);
        md.append(String.format(Locale.ROOT, "| %d | %s | %s | %.1f | %.1f | %.2f |%n", size, list(ackpoint), list(yardstick),
            mine * 1000 / size, least * 1000 / size, least / mine));
      }
      md.append("\nEach cell lists the rounds' figures; the per-checkpoint columns and the ratio are the rounds' means. "
          + "The yardstick is described in `StorageRunner`: a plain `UPDATE` of the batch's rows in a table of the same shape, "
          + "the same marker, and one row written per acknowledgement. It is not a correct storage; it is what a design costs "
          + "that writes each checkpoint once and records progress once per position, with as many statements and WAL flushes "
          + "per batch as Ackpoint's.\n");
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, md.toString());
      System.out.println(md);
    } finally {
      bench.cleanUp();
      await(pool.close());
      await(vertx.close());
      if (embedded != null) {
        embedded.close();
      }
    }
  }

  private static String options(Map<String, String> a) {
    StringBuilder given = new StringBuilder();
    for (String option : List.of("duration", "rounds")) {
      if (a.containsKey(option)) {
        given.append(" --").append(option).append(' ').append(a.get(option));
      }
    }
    return given + (a.containsKey("uri") ? " --uri …" : "");
  }

  /**
   * Ackpoint's tables, every user's row written once, and the yardstick's table filled alike. A
   * database in use is refused: the bench writes its users into Ackpoint's own table.
   */
  private void prepare() throws Exception {
    await(PgMigrations.migrate(pool));
    long rows = await(storage.count());
    if (rows > 0) {
      throw new IllegalStateException("ackpoint_write_checkpoints holds " + rows + " rows: --storage needs a scratch database");
    }
    prepared = true;
    await(storeAndAcknowledge(users));
    await(pool.query("DROP TABLE IF EXISTS " + YARDSTICK_TABLE + ", " + YARDSTICK_POSITION).execute()
        .compose(v -> pool.query("CREATE TABLE " + YARDSTICK_TABLE + " (LIKE ackpoint_write_checkpoints INCLUDING ALL)"
            + " WITH (fillfactor = 70)").execute())
        .compose(v -> pool.query("INSERT INTO " + YARDSTICK_TABLE + " SELECT * FROM ackpoint_write_checkpoints").execute())
        .compose(v -> pool.query("CREATE TABLE " + YARDSTICK_POSITION + " (position text)").execute())
        .compose(v -> pool.query("INSERT INTO " + YARDSTICK_POSITION + " VALUES ('')").execute())
        .compose(v -> pool.query("VACUUM ANALYZE " + YARDSTICK_TABLE + ", ackpoint_write_checkpoints").execute()));
  }

  /** Leaves the database as it found it, but for Ackpoint's (migrated, empty) tables. */
  private void cleanUp() throws Exception {
    if (!prepared) {
      return;
    }
    await(pool.query("DROP TABLE IF EXISTS " + YARDSTICK_TABLE + ", " + YARDSTICK_POSITION).execute()
        .compose(v -> pool.query("TRUNCATE ackpoint_write_checkpoints, ackpoint_pending").execute()));
  }

  private Sample run(String name, int size, int seconds, Function<List<FullUserId>, Future<?>> batch) throws Exception {
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    double before = Cpu.ofServer(postmasterPid);
    long batches = await(loop(size, end, batch));
    Sample sample = new Sample(batches, Cpu.ofServer(postmasterPid) - before);
    if (sample.serverCpuSeconds() <= 0) {
      throw new IllegalStateException("no CPU measured for process " + postmasterPid + ": is it the server's postmaster?");
    }
    System.out.printf(Locale.ROOT, "%s, %d per batch: %d batches in %d s, %.3f ms of the server's CPU per batch%n",
        name, size, batches, seconds, sample.msPerBatch());
    return sample;
  }

  /**
   * Batches one after the other until {@code end}; answers how many ran. Each starts from the
   * completion of the one before, not by composing futures: a chain of composed futures as long as
   * the run completes in one recursion at its end, which overflowed the stack from a few thousand
   * batches on (and the run then never ended).
   */
  private Future<Long> loop(int size, long end, Function<List<FullUserId>, Future<?>> batch) {
    Promise<Long> ran = Promise.promise();
    next(size, end, batch, 0, ran);
    return ran.future();
  }

  private void next(int size, long end, Function<List<FullUserId>, Future<?>> batch, long done, Promise<Long> ran) {
    if (System.nanoTime() >= end) {
      ran.complete(done);
      return;
    }
    batch.apply(draw(size)).onComplete(ar -> {
      if (ar.failed()) {
        ran.fail(ar.cause());
      } else {
        next(size, end, batch, done + 1, ran);
      }
    });
  }

  /** {@code size} distinct users at random, as rotating tokens bring them: the first of a partial shuffle. */
  private List<FullUserId> draw(int size) {
    for (int i = 0; i < size; i++) {
      Collections.swap(users, i, i + random.nextInt(USERS - i));
    }
    return List.copyOf(users.subList(0, size));
  }

  private Future<?> storeAndAcknowledge(List<FullUserId> chosen) {
    return writer.storeAtCurrentHead(chosen.stream().map(CheckpointWrite::generated).toList()).compose(batch -> {
      // Every row of a batch of generated checkpoints is pending: the marker is always written.
      if (batch.marker() == null) {
        return Future.failedFuture(new IllegalStateException("a batch of generated checkpoints wrote no marker"));
      }
      return storage.markProcessed(batch.marker());
    });
  }

  private Future<?> yardstickBatch(List<FullUserId> chosen) {
    String[] ids = chosen.stream().map(FullUserId::userId).toArray(String[]::new);
    String[] clients = chosen.stream().map(FullUserId::clientId).toArray(String[]::new);
    return pool.preparedQuery(YARDSTICK_WRITE).execute(Tuple.tuple(List.of(ids, clients)))
        .map(rows -> rows.iterator().next().getString(0))
        .compose(position -> pool.preparedQuery(YARDSTICK_ACKNOWLEDGE).execute(Tuple.of(position)));
  }

  private static double mean(List<Sample> samples) {
    return samples.stream().mapToDouble(Sample::msPerBatch).average().orElse(Double.NaN);
  }

  private static String list(List<Sample> samples) {
    return String.join(" / ", samples.stream().map(s -> String.format(Locale.ROOT, "%.2f", s.msPerBatch())).toList());
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get();
  }
}
