package io.ackpoint.bench;

import io.ackpoint.config.AckpointConfig.DatabaseConfig;
import io.ackpoint.config.AckpointConfig.DatabaseType;
import io.ackpoint.config.AckpointConfig.EmbeddedConfig;
import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.HeadedBatch;
import io.ackpoint.embedded.EmbeddedDatabase;
import io.ackpoint.impl.PgPools;
import io.ackpoint.source.PgReplicationSource;
import io.ackpoint.storage.HeadStoringWriter;
import io.ackpoint.storage.PgCheckpointStorage;
import io.ackpoint.storage.PgMigrations;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;

/**
 * {@code scripts/bench --storage}: what PostgreSQL spends on storage alone, per batch and per
 * checkpoint, against a yardstick, as {@code GET /whoami} is the yardstick of the HTTP side. One
 * client runs batches back to back, each followed by its acknowledgement, with no HTTP, no
 * replication stream and no other load: the server's CPU (postmaster and backends, from /proc)
 * divided by the batches is the storage's own cost, steady enough to tell changes of a few percent
 * apart, which the whole service under wrk on this machine cannot.
 *
 * <p>The two loops, alternated A, B, A, B on one server, the same users and batch sizes:
 * <ul>
 * <li>Ackpoint: {@link PgCheckpointStorage} as the service runs it on one database (the batch
 * statement at the current head with the marker behind it on its connection, then the
 * acknowledgement statement at the marker's position);
 * <li>one row write per checkpoint: a plain {@code UPDATE} of the batch's rows in a table of the same
 * shape (new id and head, nothing else decided), the same marker, and an acknowledgement that
 * writes one row (the position reached). The least any design costs that writes each checkpoint
 * once and records progress once per position; not a correct storage (nothing is locked in order,
 * nothing is answered per user, no row is ever pending).
 * </ul>
 */
public final class StorageRunner {

  /**
   * Rows in the table. Not the thousand users of the wrk cases: on a table that small the generic
   * plans scan it whole rather than look each row up by its key (cheaper in the planner's estimate,
   * dearer in fact for small batches: 0.3 ms of a one-row batch on 2,000 rows), which a deployment
   * of any size does not see.
   */
  static final int USERS = 10_000;
  static final int[] BATCH_SIZES = {1, 32, 122};

  private static final String FLOOR_TABLE = "ackpoint_bench_floor";
  private static final String FLOOR_POSITION = "ackpoint_bench_position";
  private static final String FLOOR_WRITE = """
      UPDATE ackpoint_bench_floor c
         SET write_checkpoint = c.write_checkpoint + 1, lsns = jsonb_build_object('1', pg_current_wal_lsn()::text),
             checkpoint_requested_at = now()
        FROM unnest($1::text[], $2::text[]) r(user_id, client_id)
       WHERE c.user_id = r.user_id AND c.client_id = r.client_id
      RETURNING c.user_id, c.client_id, c.write_checkpoint
      """;
  private static final String FLOOR_ACKNOWLEDGE = "UPDATE ackpoint_bench_position SET position = $1";

  record Sample(long batches, double serverCpuSeconds) {
    double msPerBatch() {
      return serverCpuSeconds * 1000 / batches;
    }
  }

  private final Pool pool;
  private final long postmasterPid;
  private final PgReplicationSource source;
  private final HeadStoringWriter ackpoint;
  private final PgCheckpointStorage storage;
  private final List<FullUserId> users = new ArrayList<>();
  private final Random random = new Random(1);

  private StorageRunner(Pool pool, long postmasterPid) {
    this.pool = pool;
    this.postmasterPid = postmasterPid;
    this.source = new PgReplicationSource(pool);
    this.storage = new PgCheckpointStorage(pool);
    this.ackpoint = storage.atCurrentHead(source::forceMarkerIf);
    for (int i = 0; i < USERS; i++) {
      users.add(FullUserId.of("bench-user-" + i, "bench"));
    }
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> a = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      a.put(args[i].replaceFirst("^--", ""), args[i + 1]);
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
      postmasterPid = Long.parseLong(Files.readAllLines(dir.resolve("postmaster.pid")).get(0).trim());
    } else {
      postmasterPid = Long.parseLong(a.get("postmaster-pid"));
    }
    Vertx vertx = Vertx.vertx();
    // The service's own pool: prepared statements cached per connection, durable commits.
    Pool pool = PgPools.create(vertx, new DatabaseConfig(DatabaseType.POSTGRESQL, uri, 2, Duration.ofSeconds(10), Duration.ofSeconds(30)),
        "ackpoint-storage-bench");
    try {
      StorageRunner bench = new StorageRunner(pool, postmasterPid);
      String version = await(pool.query("SHOW server_version").execute().map(rows -> rows.iterator().next().getString(0)));
      bench.prepare();
      StringBuilder md = new StringBuilder("# Storage alone: PostgreSQL's CPU per batch\n\n");
      md.append(String.format(Locale.ROOT, "`scripts/bench --storage%s`, %s, PostgreSQL %s (%s), %d cores. One client runs batches back "
              + "to back, each followed by its acknowledgement; %d users, each batch that many of them "
              + "in a row from a random offset; %d s per run after "
              + "2 s of warm-up, %d rounds alternated A, B, A, B on one server. CPU: the server's postmaster and backends from /proc "
              + "(no replication slot is read: the walsender's share is not in these figures).%n%n",
          a.containsKey("uri") ? " --uri …" : "", Instant.now(), version, a.containsKey("uri") ? "the server given" : "embedded default",
          Runtime.getRuntime().availableProcessors(), USERS, seconds, rounds));
      md.append("| checkpoints per batch | Ackpoint, ms per batch | one row write, ms per batch | Ackpoint, µs per checkpoint "
          + "| one row write, µs per checkpoint | one row write / Ackpoint |\n|---|---|---|---|---|---|\n");
      for (int size : BATCH_SIZES) {
        bench.run("ackpoint", size, 2, bench::storeAndAcknowledge);
        bench.run("one row write", size, 2, bench::floorBatch);
        List<Sample> mine = new ArrayList<>();
        List<Sample> floor = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
          mine.add(bench.run("ackpoint", size, seconds, bench::storeAndAcknowledge));
          floor.add(bench.run("one row write", size, seconds, bench::floorBatch));
        }
        double m = mean(mine);
        double f = mean(floor);
        md.append(String.format(Locale.ROOT, "| %d | %s | %s | %.1f | %.1f | %.2f |%n", size, list(mine), list(floor),
            m * 1000 / size, f * 1000 / size, f / m));
      }
      md.append("\nEach cell lists the rounds' figures; the per-checkpoint columns and the ratio are the rounds' means. "
          + "\"One row write\" is the yardstick described in `StorageRunner`: a plain `UPDATE` of the batch's rows in a table of "
          + "the same shape, the same marker, and one row written per acknowledgement. It is not a correct storage; it is what a "
          + "design that writes each checkpoint once and records progress once per position cannot go below.\n");
      bench.cleanUp();
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, md.toString());
      System.out.println(md);
    } finally {
      pool.close();
      vertx.close();
      if (embedded != null) {
        embedded.close();
      }
    }
  }

  /** Ackpoint's tables, every user's row written once, and the yardstick's table filled alike. */
  private void prepare() throws Exception {
    await(PgMigrations.migrate(pool));
    await(storeAndAcknowledge(users));
    await(pool.query("DROP TABLE IF EXISTS " + FLOOR_TABLE + ", " + FLOOR_POSITION).execute()
        .compose(v -> pool.query("CREATE TABLE " + FLOOR_TABLE + " (LIKE ackpoint_write_checkpoints INCLUDING ALL) WITH (fillfactor = 70)")
            .execute())
        .compose(v -> pool.query("INSERT INTO " + FLOOR_TABLE + " SELECT * FROM ackpoint_write_checkpoints").execute())
        .compose(v -> pool.query("CREATE TABLE " + FLOOR_POSITION + " (position text)").execute())
        .compose(v -> pool.query("INSERT INTO " + FLOOR_POSITION + " VALUES ('')").execute())
        .compose(v -> pool.query("VACUUM ANALYZE " + FLOOR_TABLE + ", ackpoint_write_checkpoints").execute()));
  }

  private void cleanUp() throws Exception {
    await(pool.query("DROP TABLE " + FLOOR_TABLE + ", " + FLOOR_POSITION).execute());
  }

  private Sample run(String name, int size, int seconds, Function<List<FullUserId>, Future<?>> batch) throws Exception {
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    double before = Cpu.ofServer(postmasterPid);
    long batches = await(loop(size, end, batch, 0));
    Sample sample = new Sample(batches, Cpu.ofServer(postmasterPid) - before);
    System.out.printf(Locale.ROOT, "%s, %d per batch: %d batches in %d s, %.3f ms of the server's CPU per batch%n",
        name, size, batches, seconds, sample.msPerBatch());
    return sample;
  }

  /** Batches one after the other until {@code end}, on a Vert.x thread; answers how many ran. */
  private Future<Long> loop(int size, long end, Function<List<FullUserId>, Future<?>> batch, long done) {
    if (System.nanoTime() >= end) {
      return Future.succeededFuture(done);
    }
    int from = random.nextInt(USERS);
    List<FullUserId> chosen = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      chosen.add(users.get((from + i) % USERS));
    }
    return batch.apply(chosen).compose(v -> loop(size, end, batch, done + 1));
  }

  private Future<?> storeAndAcknowledge(List<FullUserId> chosen) {
    return ackpoint.storeAtCurrentHead(chosen.stream().map(CheckpointWrite::generated).toList())
        .compose((HeadedBatch batch) -> storage.markProcessed(batch.marker() != null ? batch.marker() : batch.head()));
  }

  private Future<?> floorBatch(List<FullUserId> chosen) {
    String[] ids = chosen.stream().map(FullUserId::userId).toArray(String[]::new);
    String[] clients = chosen.stream().map(FullUserId::clientId).toArray(String[]::new);
    return pool.withConnection(conn -> {
      Future<?> written = conn.preparedQuery(FLOOR_WRITE).execute(Tuple.tuple(List.of(ids, clients)));
      Future<String> marked = source.forceMarkerIf(conn, "SELECT 1");
      return written.compose(v -> marked);
    }).compose(position -> pool.preparedQuery(FLOOR_ACKNOWLEDGE).execute(Tuple.of(position)));
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
