package io.ackpoint.bench;

import io.ackpoint.config.AckpointConfig;
import io.ackpoint.config.ConfigLoader;
import io.ackpoint.support.AckpointProcess;
import io.vertx.core.json.JsonObject;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * {@code scripts/bench --compare}: Ackpoint and another checkpoint service (the reference, started
 * apart: nothing here builds or runs it) side by side on one PostgreSQL server, the same wrk load
 * for both, runs alternated A, B, A, B. Per case: successful requests per second, and the
 * PostgreSQL server's CPU per 1,000 successful requests (its postmaster and backends, from /proc,
 * but for the other service's walsender, see {@link ReplicationSlots}), each service's own CPU, all
 * from the same runs.
 */
public final class CompareRunner {

  /** {@code nodes}: processes of each service the load is spread over (2: Ackpoint's cluster, the reference's API processes). */
  record Case(String method, String path, int users, int connections, int nodes) {
    String label() {
      return method + " " + path.replace("?client_id=bench", "") + ", " + users + (users == 1 ? " user" : " users") + ", "
          + connections + " conns" + (nodes == 1 ? "" : " on " + nodes + " nodes");
    }

    /** The chart's short label, method users/connections (×2 on two nodes): a longer one is left out by the chart's axis. */
    String category() {
      return method + " " + users + "/" + connections + (nodes == 1 ? "" : " ×" + nodes);
    }
  }

  /**
   * One service's processes under load: the ports wrk drives, the processes whose CPU counts, and
   * whether it is Ackpoint (whose slots are {@link #ACKPOINT_SLOTS}; every other slot is the
   * reference's).
   */
  record Service(List<Integer> ports, List<Long> pids, boolean ackpoint) {
  }

  record Sample(double okPerSecond, double postgresCpuMsPer1000, double serviceCpuPercent, String non2xx,
                Map<String, Double> postgresMsPer1000ByKind) {
  }

  static final List<Case> CASES = List.of(
      new Case("POST", "/sync/checkpoint-request", 1000, 64, 1),
      new Case("POST", "/sync/checkpoint-request", 1000, 256, 1),
      new Case("GET", "/write-checkpoint2.json?client_id=bench", 1, 64, 1),
      new Case("GET", "/write-checkpoint2.json?client_id=bench", 1000, 256, 1),
      new Case("POST", "/sync/checkpoint-request", 1000, 256, 2));

  /** Ackpoint's replication slots: one process's, then the two-node case's. */
  static final List<String> ACKPOINT_SLOTS = List.of("bench_compare", "bench_compare_cluster");

  private final String uri;
  private final long postmaster;
  private final int seconds;
  private final int rounds;
  private final Map<Integer, Path> referenceTokens = new HashMap<>();
  private final Map<Integer, Path> ackpointTokens = new HashMap<>();
  private final List<String> lines = new ArrayList<>();
  private final List<Chart.Compared> charted = new ArrayList<>();
  private final List<String> breakdown = new ArrayList<>();

  private CompareRunner(String uri, long postmaster, int seconds, int rounds) {
    this.uri = uri;
    this.postmaster = postmaster;
    this.seconds = seconds;
    this.rounds = rounds;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> a = Options.parse(args);
    String uri = a.get("uri");
    long postmaster = Long.parseLong(a.get("postmaster-pid"));
    // Without a reference (--reference-port 0): Ackpoint alone, for quick before/after comparisons.
    int referencePort = Integer.parseInt(a.getOrDefault("reference-port", "0"));
    long referencePid = Long.parseLong(a.getOrDefault("reference-pid", "0"));
    // The reference's second process for the two-node case (PowerSync's service: one more started
    // with the API runner alone, on the same storage and source).
    int referencePort2 = Integer.parseInt(a.getOrDefault("reference-port2", "0"));
    long referencePid2 = Long.parseLong(a.getOrDefault("reference-pid2", "0"));
    if ((referencePort2 == 0) != (referencePid2 == 0) || (referencePort2 != 0 && referencePort == 0)) {
      throw new IllegalArgumentException("--reference-port2 and --reference-pid2 go together, and with --reference-port");
    }
    int seconds = Integer.parseInt(a.getOrDefault("duration", "10"));
    int rounds = Integer.parseInt(a.getOrDefault("rounds", "2"));
    // A JVM started a moment ago still compiles its hot paths for tens of seconds under load: with a
    // short warm-up the first case measured Ackpoint's JIT (its POST at 64 connections rose from
    // 2,553 to 4,022 2xx/s between the two rounds of one run). Each service warms this long on the
    // first case, then a few seconds on each case after it.
    int firstWarmUp = Integer.parseInt(a.getOrDefault("warm-up", "30"));
    Path out = Path.of(a.getOrDefault("out", "docs/bench/compare.md"));
    List<Case> cases = selected(a.get("cases"), referencePort == 0 || referencePort2 != 0);
    CompareRunner runner = new CompareRunner(uri, postmaster, seconds, rounds);
    AckpointConfig ours = ConfigLoader.load(Map.of("ACKPOINT_CONFIG", "conf/ackpoint.yaml"));
    JsonObject key = ours.auth().jwks().getJsonArray("keys").getJsonObject(0);
    for (int users : new int[] {1, 1000}) {
      if (referencePort != 0) {
        runner.referenceTokens.put(users, tokens("reference", users, a.get("reference-secret"), a.get("reference-kid"),
            a.get("reference-audience")));
      }
      runner.ackpointTokens.put(users, tokens("ackpoint", users, key.getString("k"), key.getString("kid"), ours.auth().audiences().get(0)));
    }

    for (String slot : ACKPOINT_SLOTS) {
      long behind = ReplicationSlots.dropIfIdle(uri, slot);
      if (behind >= 0) {
        System.out.printf(Locale.ROOT, "dropped the slot %s of an earlier run (%,d bytes of WAL behind): Ackpoint makes it again at the WAL's end%n",
            slot, behind);
      }
    }
    Map<String, String> env = AckpointProcess.onPostgres(uri);
    env.put("ACKPOINT_REPLICATION_SLOT_NAME", ACKPOINT_SLOTS.get(0));
    env.put("ACKPOINT_ADMIN_TOKEN", ClusterPair.ADMIN);
    // --ackpoint-env "ACKPOINT_X=1 ACKPOINT_Y=2": settings to try, for before/after comparisons.
    for (String setting : a.getOrDefault("ackpoint-env", "").split(" ")) {
      if (setting.contains("=")) {
        env.put(setting.substring(0, setting.indexOf('=')), setting.substring(setting.indexOf('=') + 1));
      }
    }
    // --ackpoint-jar: another build of Ackpoint (an earlier commit's), for before/after comparisons.
    Path jar = Path.of(a.getOrDefault("ackpoint-jar", "target/ackpoint.jar"));
    Service referenceAlone = referencePort == 0 ? null : new Service(List.of(referencePort), List.of(referencePid), false);
    Service referencePair = referencePort2 == 0 ? null
        : new Service(List.of(referencePort, referencePort2), List.of(referencePid, referencePid2), false);
    int warmUp = firstWarmUp;
    if (cases.stream().anyMatch(c -> c.nodes() == 1)) {
      try (ServerProcess server = ServerProcess.start("compare", 18090, env, jar)) {
        Service ackpoint = new Service(List.of(server.port), List.of(server.pid()), true);
        for (Case c : cases) {
          if (c.nodes() == 1) {
            runner.measure(c, referenceAlone, ackpoint, warmUp);
            warmUp = 3;
          }
        }
      }
    }
    if (cases.stream().anyMatch(c -> c.nodes() == 2)) {
      // Two processes started just now compile their hot paths on the same cores: warmed up four
      // times as long as the first case (after 30 s their rounds still rose, 9,159 → 11,932 →
      // 15,066 2xx/s, and after 90 s, 10,603 → 12,611 → 13,459). Both nodes share one slot; the one
      // that holds the cluster's lock follows it.
      try (ClusterPair pair = new ClusterPair(env, ACKPOINT_SLOTS.get(1), 18091, jar)) {
        pair.start();
        Service ackpoint = new Service(List.of(pair.ports[0], pair.ports[1]), List.of(pair.nodes[0].pid(), pair.nodes[1].pid()), true);
        for (Case c : cases) {
          if (c.nodes() == 2) {
            runner.measure(c, referencePair, ackpoint, 4 * firstWarmUp);
          }
        }
      }
    }
    StringBuilder md = new StringBuilder("# Ackpoint and the reference, side by side\n\n");
    md.append(String.format(Locale.ROOT, "Produced on %s (%d cores) by `scripts/bench --compare` (see README, Benchmarks):"
            + " one PostgreSQL server shared by both services, wrk on loopback with 2 threads and %d rotating HS256 tokens,"
            + " %d s per run after a warm-up of each service (%d s before the first case, 3 s before each other),"
            + " runs alternated reference, Ackpoint, %d rounds per case; figures are the mean of the rounds"
            + " (non-2xx: the last round's count)."
            + " PostgreSQL CPU counts the server's postmaster and backends only, but for the other service's walsender:"
            + " each service's slot has a walsender, and every walsender reads all of the server's WAL (the other"
            + " database's too), so each service's writes were read by two, one of which a deployment of that service"
            + " alone does not have (shown apart below). Ackpoint's slots of earlier runs are dropped before it starts.%n%n",
        Instant.now(), Runtime.getRuntime().availableProcessors(), 1000, seconds, firstWarmUp, rounds).replace("1000 rotating", "1000 (or 1) rotating"));
    if (referencePort2 != 0 && cases.stream().anyMatch(c -> c.nodes() == 2)) {
      md.append(String.format(Locale.ROOT, "On 2 nodes: two Ackpoint processes in cluster mode (one follows the slot) against the reference's"
          + " process and a second one of its API runner alone, on the same storage and source; each service's load is spread"
          + " over its two processes, half the connections each, both wrk at once (each with ids and users of its own), and its"
          + " CPU is theirs together; both services warmed up %d s on it.%n%n", 4 * firstWarmUp));
    }
    md.append("| case | reference 2xx/s | Ackpoint 2xx/s | ratio | PostgreSQL CPU-ms per 1,000 2xx (ref / Ackpoint) | ratio | service CPU (ref / Ackpoint) | non-2xx (ref / Ackpoint) |\n");
    md.append("|---|---|---|---|---|---|---|---|\n");
    runner.lines.forEach(l -> md.append(l).append('\n'));
    if (!runner.charted.isEmpty()) {
      md.append("\n![Successful requests/s and PostgreSQL CPU per 1,000, the reference beside Ackpoint](compare.png)\n");
    }
    md.append("\nPostgreSQL CPU-ms per 1,000 2xx by process kind (backends that ended during a run are left out; the other service's"
        + " walsender is not in the table's figures):\n\n");
    runner.breakdown.forEach(l -> md.append("- ").append(l).append('\n'));
    Files.createDirectories(out.getParent());
    Files.writeString(out, md.toString());
    if (!runner.charted.isEmpty()) {
      Chart.writeComparison(out.resolveSibling("compare.png"), runner.charted, String.format(Locale.ROOT,
          "The reference beside Ackpoint, one PostgreSQL, %d cores, %s", Runtime.getRuntime().availableProcessors(),
          LocalDate.now(ZoneOffset.UTC)));
    }
    System.out.println(md);
    System.exit(0);
  }

  /** Warms both services up on the case, then alternates: reference, Ackpoint, reference, Ackpoint. */
  private void measure(Case c, Service reference, Service ackpoint, int warmUp) throws Exception {
    if (reference != null) {
      load(reference, c, referenceTokens.get(c.users()), warmUp);
    }
    load(ackpoint, c, ackpointTokens.get(c.users()), warmUp);
    List<Sample> theirs = new ArrayList<>();
    List<Sample> mine = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      if (reference != null) {
        theirs.add(sample(reference, c, referenceTokens.get(c.users())));
      }
      Sample sample = sample(ackpoint, c, ackpointTokens.get(c.users()));
      mine.add(sample);
      System.out.println(c.label() + ": Ackpoint " + Math.round(sample.okPerSecond()) + " 2xx/s, PostgreSQL CPU-ms per 1,000 by kind "
          + sample.postgresMsPer1000ByKind());
    }
    breakdown.add(kinds(c, "Ackpoint", mine));
    if (reference == null) {
      return;
    }
    breakdown.add(kinds(c, "reference", theirs));
    lines.add(row(c, theirs, mine));
    charted.add(compared(c, theirs, mine));
    System.out.println(lines.get(lines.size() - 1));
  }

  private Sample sample(Service service, Case c, Path tokens) throws Exception {
    List<Long> others = ReplicationSlots.walsenders(uri).entrySet().stream()
        .filter(slot -> ACKPOINT_SLOTS.contains(slot.getKey()) != service.ackpoint())
        .map(Map.Entry::getValue).toList();
    double pg = Cpu.ofServer(postmaster);
    Map<String, Double> kindsBefore = Cpu.ofServerByKind(postmaster, others);
    double serviceBefore = cpu(service);
    List<Wrk.Result> runs = load(service, c, tokens, seconds);
    double serverUsed = Cpu.ofServer(postmaster) - pg;
    double serviceUsed = cpu(service) - serviceBefore;
    long ok = runs.stream().mapToLong(Wrk.Result::ok).sum();
    double okPerSecond = runs.stream().mapToDouble(Wrk.Result::okPerSecond).sum();
    double ran = runs.stream().mapToDouble(Wrk.Result::seconds).max().orElseThrow();
    Map<String, Double> kindsAfter = Cpu.ofServerByKind(postmaster, others);
    double pgUsed = serverUsed
        - (kindsAfter.getOrDefault(Cpu.OTHERS_WALSENDER, 0.0) - kindsBefore.getOrDefault(Cpu.OTHERS_WALSENDER, 0.0));
    Map<String, Double> kinds = new TreeMap<>();
    // Backends that ended during the run count nowhere here; the total above has them.
    kindsAfter.forEach((kind, cpu) -> kinds.put(kind, (cpu - kindsBefore.getOrDefault(kind, 0.0)) * 1000 / Math.max(1, ok) * 1000));
    String non2xx = runs.stream().map(Wrk.Result::non2xx).collect(Collectors.joining(" + "));
    return new Sample(okPerSecond, ok == 0 ? Double.NaN : pgUsed * 1000 / ok * 1000, serviceUsed / ran * 100, non2xx, kinds);
  }

  /** The case's load spread evenly over the service's ports, all at once. */
  private static List<Wrk.Result> load(Service service, Case c, Path tokens, int seconds) {
    return Wrk.runAll(service.ports(), c.method(), c.path(), tokens, c.connections() / service.ports().size(), seconds);
  }

  /** CPU seconds of the service's processes so far. */
  private static double cpu(Service service) throws Exception {
    double total = 0;
    for (long pid : service.pids()) {
      total += Cpu.ofProcess(pid);
    }
    return total;
  }

  private static Chart.Compared compared(Case c, List<Sample> ref, List<Sample> ack) {
    return new Chart.Compared(c.category(), mean(ref, Sample::okPerSecond), mean(ack, Sample::okPerSecond),
        mean(ref, Sample::postgresCpuMsPer1000), mean(ack, Sample::postgresCpuMsPer1000));
  }

  private static String row(Case c, List<Sample> ref, List<Sample> ack) {
    double refOk = mean(ref, Sample::okPerSecond);
    double ackOk = mean(ack, Sample::okPerSecond);
    double refPg = mean(ref, Sample::postgresCpuMsPer1000);
    double ackPg = mean(ack, Sample::postgresCpuMsPer1000);
    return String.format(Locale.ROOT, "| %s | %,.0f | %,.0f | %.1f× | %.1f / %.1f | %.2f | %.0f%% / %.0f%% | %s / %s |",
        c.label(), refOk, ackOk, ackOk / refOk, refPg, ackPg, ackPg / refPg,
        mean(ref, Sample::serviceCpuPercent), mean(ack, Sample::serviceCpuPercent),
        ref.get(ref.size() - 1).non2xx(), ack.get(ack.size() - 1).non2xx());
  }

  /**
   * {@code --cases 1,3}: those cases only (numbered from 1), for quick before/after comparisons.
   * Without it, every case; but the two-node one unless {@code twoNodes} (a reference without its
   * second process).
   */
  private static List<Case> selected(String numbers, boolean twoNodes) {
    if (numbers == null) {
      return CASES.stream().filter(c -> twoNodes || c.nodes() == 1).toList();
    }
    List<Case> cases = new ArrayList<>();
    for (String n : numbers.split(",")) {
      Case c = CASES.get(Integer.parseInt(n.trim()) - 1);
      if (c.nodes() == 2 && !twoNodes) {
        throw new IllegalArgumentException("case " + n.trim() + " needs the reference's second process: --reference-port2 and --reference-pid2");
      }
      cases.add(c);
    }
    return cases;
  }

  private static String kinds(Case c, String service, List<Sample> samples) {
    Map<String, Double> mean = new TreeMap<>();
    samples.forEach(s -> s.postgresMsPer1000ByKind().forEach((k, v) -> mean.merge(k, v / samples.size(), Double::sum)));
    StringBuilder b = new StringBuilder(c.label()).append(", ").append(service).append(':');
    mean.forEach((k, v) -> {
      if (v >= 0.05) {
        b.append(String.format(Locale.ROOT, " %s %.1f", k, v));
      }
    });
    return b.toString();
  }

  private static double mean(List<Sample> samples, java.util.function.ToDoubleFunction<Sample> f) {
    return samples.stream().mapToDouble(f).average().orElse(Double.NaN);
  }

  /** HS256 tokens of {@code users} subs (bench-user-0, 1…) for a service's key and audience, one a line. */
  private static Path tokens(String name, int users, String secret, String kid, String audience) throws Exception {
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(Base64.getUrlDecoder().decode(secret), "HmacSHA256"));
    String header = b64.encodeToString(new JsonObject().put("alg", "HS256").put("typ", "JWT").put("kid", kid).encode()
        .getBytes(StandardCharsets.UTF_8));
    long now = Instant.now().getEpochSecond();
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < users; i++) {
      String claims = b64.encodeToString(new JsonObject().put("sub", "bench-user-" + i).put("aud", audience)
          .put("iat", now).put("exp", now + 4 * 3600).encode().getBytes(StandardCharsets.UTF_8));
      String input = header + "." + claims;
      lines.add(input + "." + b64.encodeToString(mac.doFinal(input.getBytes(StandardCharsets.US_ASCII))));
    }
    Path file = Files.createTempFile("ackpoint-compare-" + name, ".txt");
    Files.write(file, lines);
    return file;
  }
}
