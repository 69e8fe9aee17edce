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

/**
 * {@code scripts/bench --compare}: Ackpoint and another checkpoint service (the reference, started
 * apart: nothing here builds or runs it) side by side on one PostgreSQL server, the same wrk load
 * for both, runs alternated A, B, A, B. Per case: successful requests per second, and the
 * PostgreSQL server's CPU per 1,000 successful requests (its postmaster and backends, from /proc),
 * each service's own CPU, all from the same runs.
 */
public final class CompareRunner {

  record Case(String method, String path, int users, int connections) {
    String label() {
      return method + " " + path.replace("?client_id=bench", "") + ", " + users + (users == 1 ? " user" : " users") + ", "
          + connections + " conns";
    }

    /** The chart's short label: method, users / connections. */
    String category() {
      return method + ", " + users + " / " + connections;
    }
  }

  record Sample(double okPerSecond, double postgresCpuMsPer1000, double serviceCpuPercent, String non2xx,
                Map<String, Double> postgresMsPer1000ByKind) {
  }

  static final List<Case> CASES = List.of(
      new Case("POST", "/sync/checkpoint-request", 1000, 64),
      new Case("POST", "/sync/checkpoint-request", 1000, 256),
      new Case("GET", "/write-checkpoint2.json?client_id=bench", 1, 64),
      new Case("GET", "/write-checkpoint2.json?client_id=bench", 1000, 256));

  public static void main(String[] args) throws Exception {
    Map<String, String> a = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      a.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    String uri = a.get("uri");
    long postmaster = Long.parseLong(a.get("postmaster-pid"));
    // Without a reference (--reference-port 0): Ackpoint alone, for quick before/after comparisons.
    int referencePort = Integer.parseInt(a.getOrDefault("reference-port", "0"));
    long referencePid = Long.parseLong(a.getOrDefault("reference-pid", "0"));
    int seconds = Integer.parseInt(a.getOrDefault("duration", "10"));
    int rounds = Integer.parseInt(a.getOrDefault("rounds", "2"));
    // A JVM started a moment ago still compiles its hot paths for tens of seconds under load: with a
    // short warm-up the first case measured Ackpoint's JIT (its POST at 64 connections rose from
    // 2,553 to 4,022 2xx/s between the two rounds of one run). Each service warms this long on the
    // first case, then a few seconds on each case after it.
    int firstWarmUp = Integer.parseInt(a.getOrDefault("warm-up", "30"));
    Path out = Path.of(a.getOrDefault("out", "docs/bench/compare.md"));
    AckpointConfig ours = ConfigLoader.load(Map.of("ACKPOINT_CONFIG", "conf/ackpoint.yaml"));
    JsonObject key = ours.auth().jwks().getJsonArray("keys").getJsonObject(0);
    Map<Integer, Path> referenceTokens = new HashMap<>();
    Map<Integer, Path> ackpointTokens = new HashMap<>();
    for (int users : new int[] {1, 1000}) {
      if (referencePort != 0) {
        referenceTokens.put(users, tokens("reference", users, a.get("reference-secret"), a.get("reference-kid"),
            a.get("reference-audience")));
      }
      ackpointTokens.put(users, tokens("ackpoint", users, key.getString("k"), key.getString("kid"), ours.auth().audiences().get(0)));
    }

    Map<String, String> env = AckpointProcess.onPostgres(uri);
    env.put("ACKPOINT_REPLICATION_SLOT_NAME", "bench_compare");
    // --ackpoint-env "ACKPOINT_X=1 ACKPOINT_Y=2": settings to try, for before/after comparisons.
    for (String setting : a.getOrDefault("ackpoint-env", "").split(" ")) {
      if (setting.contains("=")) {
        env.put(setting.substring(0, setting.indexOf('=')), setting.substring(setting.indexOf('=') + 1));
      }
    }
    List<String> lines = new ArrayList<>();
    List<Chart.Compared> charted = new ArrayList<>();
    List<String> breakdown = new ArrayList<>();
    Map<String, List<Sample>> reference = new HashMap<>();
    Map<String, List<Sample>> ackpoint = new HashMap<>();
    // --ackpoint-jar: another build of Ackpoint (an earlier commit's), for before/after comparisons.
    try (ServerProcess server = ServerProcess.start("compare", 18090, env, Path.of(a.getOrDefault("ackpoint-jar", "target/ackpoint.jar")))) {
      int warmUp = firstWarmUp;
      for (Case c : selected(a.get("cases"))) {
        // Warm both up on the case, then alternate: A, B, A, B.
        if (referencePort != 0) {
          Wrk.run(referencePort, c.method(), c.path(), referenceTokens.get(c.users()), c.connections(), warmUp);
        }
        Wrk.run(server.port, c.method(), c.path(), ackpointTokens.get(c.users()), c.connections(), warmUp);
        warmUp = 3;
        for (int round = 0; round < rounds; round++) {
          if (referencePort != 0) {
            reference.computeIfAbsent(c.label(), k -> new ArrayList<>())
                .add(sample(referencePort, referencePid, postmaster, c, referenceTokens.get(c.users()), seconds));
          }
          Sample mine = sample(server.port, server.pid(), postmaster, c, ackpointTokens.get(c.users()), seconds);
          ackpoint.computeIfAbsent(c.label(), k -> new ArrayList<>()).add(mine);
          System.out.println(c.label() + ": Ackpoint " + Math.round(mine.okPerSecond()) + " 2xx/s, PostgreSQL CPU-ms per 1,000 by kind "
              + mine.postgresMsPer1000ByKind());
        }
        breakdown.add(kinds(c, "Ackpoint", ackpoint.get(c.label())));
        if (referencePort == 0) {
          continue;
        }
        breakdown.add(kinds(c, "reference", reference.get(c.label())));
        lines.add(row(c, reference.get(c.label()), ackpoint.get(c.label())));
        charted.add(compared(c, reference.get(c.label()), ackpoint.get(c.label())));
        System.out.println(lines.get(lines.size() - 1));
      }
    }
    StringBuilder md = new StringBuilder("# Ackpoint and the reference, side by side\n\n");
    md.append(String.format(Locale.ROOT, "Produced on %s (%d cores) by `scripts/bench --compare` (see README, Benchmarks):"
            + " one PostgreSQL server shared by both services, wrk on loopback with 2 threads and %d rotating HS256 tokens,"
            + " %d s per run after a warm-up of each service (%d s before the first case, 3 s before each other),"
            + " runs alternated reference, Ackpoint, %d rounds per case; figures are the mean of the rounds"
            + " (non-2xx: the last round's count)."
            + " PostgreSQL CPU counts the server's postmaster and backends only.%n%n",
        Instant.now(), Runtime.getRuntime().availableProcessors(), 1000, seconds, firstWarmUp, rounds).replace("1000 rotating", "1000 (or 1) rotating"));
    md.append("| case | reference 2xx/s | Ackpoint 2xx/s | ratio | PostgreSQL CPU-ms per 1,000 2xx (ref / Ackpoint) | ratio | service CPU (ref / Ackpoint) | non-2xx (ref / Ackpoint) |\n");
    md.append("|---|---|---|---|---|---|---|---|\n");
    lines.forEach(l -> md.append(l).append('\n'));
    if (!charted.isEmpty()) {
      md.append("\n![Successful requests/s and PostgreSQL CPU per 1,000, the reference beside Ackpoint](compare.png)\n");
    }
    md.append("\nPostgreSQL CPU-ms per 1,000 2xx by process kind (backends that ended during a run are left out):\n\n");
    breakdown.forEach(l -> md.append("- ").append(l).append('\n'));
    Files.createDirectories(out.getParent());
    Files.writeString(out, md.toString());
    if (!charted.isEmpty()) {
      Chart.writeComparison(out.resolveSibling("compare.png"), charted, String.format(Locale.ROOT,
          "The reference beside Ackpoint, one PostgreSQL, %d cores, %s", Runtime.getRuntime().availableProcessors(),
          LocalDate.now(ZoneOffset.UTC)));
    }
    System.out.println(md);
    System.exit(0);
  }

  private static Sample sample(int port, long pid, long postmaster, Case c, Path tokens, int seconds) throws Exception {
    double pg = Cpu.ofServer(postmaster);
    Map<String, Double> kindsBefore = Cpu.ofServerByKind(postmaster);
    double service = Cpu.ofProcess(pid);
    Wrk.Result r = Wrk.run(port, c.method(), c.path(), tokens, c.connections(), seconds);
    double pgUsed = Cpu.ofServer(postmaster) - pg;
    double serviceUsed = Cpu.ofProcess(pid) - service;
    Map<String, Double> kinds = new TreeMap<>();
    // Backends that ended during the run count nowhere here; the total above has them.
    Cpu.ofServerByKind(postmaster).forEach((kind, cpu) ->
        kinds.put(kind, (cpu - kindsBefore.getOrDefault(kind, 0.0)) * 1000 / Math.max(1, r.ok()) * 1000));
    return new Sample(r.okPerSecond(), r.ok() == 0 ? Double.NaN : pgUsed * 1000 / r.ok() * 1000,
        serviceUsed / r.seconds() * 100, r.non2xx(), kinds);
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

  /** {@code --cases 1,3}: those cases only (numbered from 1), for quick before/after comparisons. */
  private static List<Case> selected(String numbers) {
    if (numbers == null) {
      return CASES;
    }
    List<Case> cases = new ArrayList<>();
    for (String n : numbers.split(",")) {
      cases.add(CASES.get(Integer.parseInt(n.trim()) - 1));
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
    List<Chart.Compared> charted = new ArrayList<>();
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
