package io.ackpoint.bench;

import io.ackpoint.config.AckpointConfig;
import io.ackpoint.config.AckpointConfig.EmbeddedConfig;
import io.ackpoint.config.ConfigLoader;
import io.ackpoint.embedded.EmbeddedDatabase;
import io.ackpoint.support.AckpointProcess;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.auth.JWTOptions;
import io.vertx.ext.auth.jwt.JWTAuth;
import io.vertx.ext.auth.jwt.JWTAuthOptions;

import java.awt.Color;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * scripts/bench: drives Ackpoint with wrk on loopback and writes docs/bench/results.md and chart.png.
 * Every figure that is compared is measured in the same run: batching against no batching, the
 * checkpoint route against a bare authenticated route.
 */
public final class BenchRunner {

  private static final String POST = "POST";
  private static final String GET = "GET";
  private static final String REQUEST = "/sync/checkpoint-request";
  private static final String GENERATED = "/write-checkpoint2.json?client_id=bench";
  private static final String WHOAMI = "/whoami";
  private static final int[] CONNECTIONS = {64, 256, 1024};

  record Row(String server, String route, int users, int connections, Wrk.Result wrk, double requestsPerRoundTrip,
             double ackpointCpu, double postgresCpu) {
  }

  private final int seconds;
  private final boolean quick;
  private final Path out;
  private final Vertx vertx = Vertx.vertx();
  private final List<Row> rows = new ArrayList<>();
  private final Map<String, Path> tokenFiles = new HashMap<>();
  private final JWTAuth signer;
  private final String audience;
  private final String kid;

  private BenchRunner(int seconds, boolean quick, Path out) {
    this.seconds = seconds;
    this.quick = quick;
    this.out = out;
    AckpointConfig config = ConfigLoader.load(Map.of("ACKPOINT_CONFIG", "conf/ackpoint.yaml"));
    JsonObject key = config.auth().jwks().getJsonArray("keys").getJsonObject(0);
    this.kid = key.getString("kid");
    this.audience = config.auth().audiences().get(0);
    this.signer = JWTAuth.create(vertx, new JWTAuthOptions().addJwk(key));
  }

  public static void main(String[] args) throws Exception {
    int seconds = 10;
    boolean quick = false;
    String uri = null;
    Path out = Path.of("docs/bench");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--duration" -> seconds = Integer.parseInt(args[++i]);
        case "--uri" -> uri = args[++i];
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (quick) {
      seconds = Math.min(seconds, 3);
    }
    new BenchRunner(seconds, quick, out).run(uri);
    System.exit(0);
  }

  private String token(String sub) {
    long now = Instant.now().getEpochSecond();
    return signer.generateToken(new JsonObject().put("sub", sub).put("aud", audience).put("iat", now).put("exp", now + 4 * 3600),
        new JWTOptions().setAlgorithm("HS256").setHeader(new JsonObject().put("kid", kid)).setNoTimestamp(true));
  }

  private Path tokens(int users) throws Exception {
    Path file = tokenFiles.get("u" + users);
    if (file == null) {
      List<String> lines = new ArrayList<>();
      for (int i = 0; i < users; i++) {
        lines.add(token("bench-user-" + i));
      }
      file = Files.createTempFile("ackpoint-bench-tokens-" + users, ".txt");
      Files.write(file, lines);
      tokenFiles.put("u" + users, file);
    }
    return file;
  }

  private void run(String uri) throws Exception {
    EmbeddedDatabase embedded = null;
    if (uri == null) {
      embedded = EmbeddedDatabase.start(new EmbeddedConfig(Files.createTempDirectory("ackpoint-bench-pg"), 0));
      uri = embedded.uri();
    }
    try {
      Map<String, String> env = AckpointProcess.onPostgres(uri);
      env.put("ACKPOINT_ADMIN_TOKEN", ClusterPair.ADMIN);
      int port = 18080;

      Map<String, String> batching = new HashMap<>(env);
      batching.put("ACKPOINT_REPLICATION_SLOT_NAME", "bench_batching");
      Results results = new Results();
      try (ServerProcess server = ServerProcess.start("batching", port, batching)) {
        warmUp(server);
        results.idleCpu = IdleCpu.measure(server, quick ? 5 : 30, quick ? 10 : 60);
        for (String route : List.of(REQUEST, GENERATED)) {
          for (int users : new int[] {1, 1000}) {
            for (int c : CONNECTIONS) {
              rows.add(measure("batching", server, route.equals(REQUEST) ? POST : GET, route, users, c));
            }
          }
        }
        for (int c : CONNECTIONS) {
          rows.add(measure("batching", server, GET, WHOAMI, 1000, c));
        }
        results.idle = AckLatency.measure(vertx, port, token("latency-idle"), "lat", quick ? 50 : 200);
        results.underLoad = latencyUnderLoad(server);
        // Users of this run only: an earlier run's checkpoints (on an external database) would answer first.
        String streamUsers = "stream-" + Instant.now().getEpochSecond() + "-";
        results.streams = StreamsAtScale.measure(vertx, server, uri, streamUsers, streamTokens(streamUsers, quick ? 2000 : 10_000));
        results.compaction = compactionUnderLoad(server, uri);
      }
      Map<String, String> noBatching = new HashMap<>(env);
      noBatching.put("ACKPOINT_REPLICATION_SLOT_NAME", "bench_nobatching");
      noBatching.put("ACKPOINT_BATCHING_ENABLED", "false");
      try (ServerProcess server = ServerProcess.start("no-batching", port + 1, noBatching)) {
        warmUp(server);
        for (int users : new int[] {1, 1000}) {
          for (int c : CONNECTIONS) {
            rows.add(measure("no batching", server, POST, REQUEST, users, c));
          }
        }
      }
      try (ServerProcess server = ServerProcess.start("mongodb-storage", port + 2, MongoStorageCase.env(env))) {
        warmUp(server);
        for (int c : MongoStorageCase.CONNECTIONS) {
          rows.add(measure(MongoStorageCase.NAME, server, POST, REQUEST, 1000, c));
        }
      }
      results.twoNodes = TwoNodeCase.run(env, port + 3, vertx, tokens(1000), token("latency-two-nodes"), seconds, quick);
      report(results);
    } finally {
      if (embedded != null) {
        embedded.close();
      }
      vertx.close();
    }
  }

  private void warmUp(ServerProcess server) throws Exception {
    Wrk.run(server.port, POST, REQUEST, tokens(1000), 256, quick ? 2 : 5);
    Wrk.run(server.port, GET, WHOAMI, tokens(1000), 256, quick ? 1 : 3);
  }

  private Row measure(String name, ServerProcess server, String method, String route, int users, int connections)
      throws Exception {
    double batchesBefore = server.metric("ackpoint_batches_total");
    double ackCpu = Cpu.ofProcess(server.pid());
    double pgCpu = Cpu.ofPostgres();
    Wrk.Result result = Wrk.run(server.port, method, route, tokens(users), connections, seconds);
    double ackCpuUsed = (Cpu.ofProcess(server.pid()) - ackCpu) / result.seconds() * 100;
    double pgCpuUsed = (Cpu.ofPostgres() - pgCpu) / result.seconds() * 100;
    double batches = server.metric("ackpoint_batches_total") - batchesBefore;
    double perRoundTrip = route.equals(WHOAMI) || batches == 0 ? Double.NaN : result.ok() / batches;
    Row row = new Row(name, route.replace("?client_id=bench", ""), users, connections, result, perRoundTrip, ackCpuUsed, pgCpuUsed);
    System.out.println(format(row));
    return row;
  }

  /**
   * Samples for as long as the load runs (but its first and last second), one request at a time: a
   * p99 of 100 samples, as this took before, is their second worst, and moved between runs by more
   * than any change it was to show.
   */
  private AckLatency.Result latencyUnderLoad(ServerProcess server) throws Exception {
    int seconds = quick ? 5 : 15;
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds - 1);
    CompletableFuture<Wrk.Result> load = CompletableFuture.supplyAsync(() -> {
      try {
        return Wrk.run(server.port, POST, REQUEST, tokens(1000), 256, seconds);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    Thread.sleep(1000); // let the load reach its steady state before sampling
    AckLatency.Result result = AckLatency.measureUntil(vertx, server.port, token("latency-load"), "lat", 10_000, end);
    load.join();
    return result;
  }

  private List<String> streamTokens(String prefix, int n) {
    List<String> tokens = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      tokens.add(token(prefix + i));
    }
    return tokens;
  }

  private CompactionRun compactionUnderLoad(ServerProcess server, String uri) throws Exception {
    int rowsToCompact = quick ? 100_000 : 1_000_000;
    try (Connection c = PgJdbc.connect(uri); Statement s = c.createStatement()) {
      s.execute("INSERT INTO ackpoint_write_checkpoints (user_id, write_checkpoint, lsns, processed_at_lsn, checkpoint_requested_at)"
          + " SELECT 'expired-' || g, 1, '{\"1\":\"00000000/00000001\"}', '00000000/00000001', now() - interval '90 days'"
          + " FROM generate_series(1, " + rowsToCompact + ") g");
      s.execute("VACUUM ANALYZE ackpoint_write_checkpoints");
    }
    Wrk.Result baseline = Wrk.run(server.port, POST, REQUEST, tokens(1000), 256, seconds);
    CompletableFuture<Wrk.Result> load = CompletableFuture.supplyAsync(() -> {
      try {
        return Wrk.run(server.port, POST, REQUEST, tokens(1000), 256, seconds);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    Thread.sleep(500); // start compacting once the load runs
    long start = System.nanoTime();
    JsonObject report = new JsonObject(server.post("/admin/compact", ClusterPair.ADMIN).body()).getJsonObject("data");
    double took = (System.nanoTime() - start) / 1e9;
    return new CompactionRun(rowsToCompact, report.getLong("deleted"), report.getInteger("batches"), took, baseline, load.join());
  }

  record CompactionRun(int inserted, long deleted, int batches, double seconds, Wrk.Result baseline, Wrk.Result during) {
  }

  static final class Results {
    IdleCpu.Result idleCpu;
    AckLatency.Result idle;
    AckLatency.Result underLoad;
    StreamsAtScale.Result streams;
    CompactionRun compaction;
    TwoNodeCase.Result twoNodes;
  }

  private static String format(Row r) {
    Wrk.Result w = r.wrk();
    return String.format(Locale.ROOT, "| %s | %s | %d | %d | %,.0f | %.1f | %.1f | %.1f | %s | %s | %.0f%% | %.0f%% |",
        r.server(), r.route(), r.users(), r.connections(), w.okPerSecond(), w.p50us() / 1000.0, w.p99us() / 1000.0,
        w.maxUs() / 1000.0, w.non2xx(), Double.isNaN(r.requestsPerRoundTrip()) ? "–" : String.format(Locale.ROOT, "%.1f", r.requestsPerRoundTrip()),
        r.ackpointCpu(), r.postgresCpu());
  }

  private Row find(String server, String route, int users, int connections) {
    return rows.stream().filter(r -> r.server().equals(server) && r.route().equals(route) && r.users() == users
        && r.connections() == connections).findFirst().orElseThrow();
  }

  private void report(Results results) throws Exception {
    Files.createDirectories(out);
    StringBuilder md = new StringBuilder();
    md.append("# Ackpoint benchmark\n\n");
    md.append(String.format(Locale.ROOT, "Produced by `scripts/bench%s` on %s (%d cores), PostgreSQL embedded on the same machine, "
        + "wrk on loopback with 2 threads, %d s per case. Ratios compare figures of this same run.%n%n",
        quick ? " --quick" : "", Instant.now(), Runtime.getRuntime().availableProcessors(), seconds));
    Row batched = find("batching", REQUEST, 1000, 256);
    Row unbatched = find("no batching", REQUEST, 1000, 256);
    Row whoami = find("batching", WHOAMI, 1000, 256);
    md.append("## Headline (POST /sync/checkpoint-request, 1000 users, 256 connections)\n\n");
    md.append(String.format(Locale.ROOT, "- %,.0f successful requests/s, p99 %.1f ms, non-2xx: %s%n",
        batched.wrk().okPerSecond(), batched.wrk().p99us() / 1000.0, batched.wrk().non2xx()));
    md.append(String.format(Locale.ROOT, "- batching vs no batching: **%.1f×** (%,.0f vs %,.0f req/s)%n",
        batched.wrk().okPerSecond() / unbatched.wrk().okPerSecond(), batched.wrk().okPerSecond(), unbatched.wrk().okPerSecond()));
    md.append(String.format(Locale.ROOT, "- checkpoint route vs bare authenticated route (`GET /whoami`): **%.2f** (%,.0f vs %,.0f req/s)%n",
        batched.wrk().okPerSecond() / whoami.wrk().okPerSecond(), batched.wrk().okPerSecond(), whoami.wrk().okPerSecond()));
    Row small = find("batching", REQUEST, 1000, 64);
    md.append(String.format(Locale.ROOT, "- p99 at 64 connections: %.1f ms%n", small.wrk().p99us() / 1000.0));
    md.append(String.format(Locale.ROOT, "- acknowledgement latency (response → stream line), idle source: p50 %.1f ms, p99 %.1f ms (%d samples)%n",
        results.idle.p50ms(), results.idle.p99ms(), results.idle.samples()));
    md.append(String.format(Locale.ROOT, "- acknowledgement latency under load (256 connections of checkpoint requests): p50 %.1f ms, p99 %.1f ms (%d samples)%n",
        results.underLoad.p50ms(), results.underLoad.p99ms(), results.underLoad.samples()));
    IdleCpu.Result idle = results.idleCpu;
    md.append(String.format(Locale.ROOT, "- an idle Ackpoint (nobody calling, %.0f s after the warm-up, over %.0f s): %.2f%% of a core, %.1f wake-ups a second%n",
        idle.settleSeconds(), idle.windowSeconds(), idle.percentOfACore(), idle.wakeUpsPerSecond()));
    StreamsAtScale.Result s = results.streams;
    md.append(String.format(Locale.ROOT, "- %,d open streams: %.1f KB of live heap per stream (%.1f MB → %.1f MB after full GC), %.1f%% of a core while idle; "
            + "one position acknowledging a checkpoint of every stream's user reaches every stream in %.2f s the first time (code the JIT has "
            + "not compiled yet), then in %s (%,d of %,d, each from the marker's commit); "
            + "one checkpoint request per user through the API, 256 at a time, acknowledged on every stream in %.2f s (%,d of %,d)%n",
        s.streams(), s.heapPerStreamBytes() / 1024, s.heapBeforeBytes() / 1e6, s.heapAfterBytes() / 1e6, s.idleCpuPercent(),
        s.fanOutSeconds().get(0), s.fanOutSeconds().subList(1, s.fanOutSeconds().size()).stream()
            .map(seconds -> String.format(Locale.ROOT, "%.2f s", seconds)).collect(Collectors.joining(" and ")),
        s.fannedOut(), s.streams(), s.deliverSeconds(), s.delivered(), s.streams()));
    CompactionRun c = results.compaction;
    md.append(String.format(Locale.ROOT, "- compaction of %,d expired rows under load: %,d deleted in %d batches in %.1f s; checkpoint traffic meanwhile "
            + "%,.0f req/s with p99 %.1f ms (without compaction: %,.0f req/s, p99 %.1f ms), non-2xx: %s%n%n",
        c.inserted(), c.deleted(), c.batches(), c.seconds(), c.during().okPerSecond(), c.during().p99us() / 1000.0,
        c.baseline().okPerSecond(), c.baseline().p99us() / 1000.0, c.during().non2xx()));
    md.append(MongoStorageCase.markdown(c2 -> find(MongoStorageCase.NAME, REQUEST, 1000, c2)));
    md.append('\n').append(TwoNodeCase.markdown(results.twoNodes, batched));
    md.append("\n![throughput and p99 against connections, acknowledgement latency](chart.png)\n\n");
    md.append("## All cases\n\n");
    md.append("| server | route | users | connections | successful req/s | p50 ms | p99 ms | max ms | non-2xx | requests per storage round trip | Ackpoint CPU | PostgreSQL CPU |\n");
    md.append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    rows.forEach(r -> md.append(format(r)).append('\n'));
    md.append("\nCPU is in percent of one core (the machine has ")
        .append(Runtime.getRuntime().availableProcessors()).append("); wrk runs on the same machine and takes its share.\n");
    Files.writeString(out.resolve("results.md"), md.toString());

    List<Chart.Series> series = new ArrayList<>();
    series.add(series("checkpoint-request, batching", new Color(33, 102, 172), "batching", REQUEST));
    series.add(series("checkpoint-request, no batching", new Color(214, 96, 77), "no batching", REQUEST));
    series.add(series("GET /whoami (HTTP + JWT only)", new Color(120, 120, 120), "batching", WHOAMI));
    Chart.write(out.resolve("chart.png"), series, List.of(new Chart.Ack("idle source", results.idle),
        new Chart.Ack("under load (256 connections)", results.underLoad)), "Ackpoint, 1000 users, loopback, 2 cores");
    System.out.println();
    System.out.println(md);
  }

  private Chart.Series series(String name, Color color, String server, String route) {
    List<double[]> throughput = new ArrayList<>();
    List<double[]> p99 = new ArrayList<>();
    for (int c : CONNECTIONS) {
      Row r = find(server, route, 1000, c);
      throughput.add(new double[] {c, r.wrk().okPerSecond()});
      p99.add(new double[] {c, r.wrk().p99us() / 1000.0});
    }
    return new Chart.Series(name, color, throughput, p99);
  }
}
