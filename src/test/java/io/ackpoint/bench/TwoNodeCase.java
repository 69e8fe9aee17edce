package io.ackpoint.bench;

import io.vertx.core.Vertx;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The two-node case of scripts/bench: two Ackpoint processes ({@code java -jar}) in cluster mode on
 * loopback, on the bench's PostgreSQL, with the default {@code cluster.failover_timeout}. It measures
 * the throughput of both nodes driven at once, the acknowledgement latency across nodes (request on
 * one node, stream on the other), and how long the other node takes to follow replication after the
 * follower's node is killed (SIGKILL) or stopped (SIGTERM).
 */
final class TwoNodeCase {

  static final String NAME = "two nodes";
  private static final String REQUEST = "/sync/checkpoint-request";

  record Result(Wrk.Result[] standalone, Wrk.Result[] clustered, AckLatency.Result fromFollower,
                AckLatency.Result toFollower, List<Long> killedMillis, List<Long> stoppedMillis) {
  }

  private final Map<String, String> base;
  private final ClusterPair cluster;

  private TwoNodeCase(Map<String, String> base, int firstPort) {
    this.base = base;
    this.cluster = new ClusterPair(base, "bench_two_nodes", firstPort, Path.of("target/ackpoint.jar"));
  }

  /** {@code tokens}: the bench's file of 1000 users' tokens; {@code token}: one user's, for the latency streams. */
  static Result run(Map<String, String> base, int firstPort, Vertx vertx, Path tokens, String token, int seconds, boolean quick)
      throws Exception {
    TwoNodeCase bench = new TwoNodeCase(base, firstPort);
    try (ClusterPair ignored = bench.cluster) {
      return bench.measure(vertx, tokens, token, seconds, quick);
    }
  }

  private Result measure(Vertx vertx, Path tokens, String token, int seconds, boolean quick) throws Exception {
    // The same two processes without the cluster, each on a slot of its own: what two nodes cost
    // on this machine apart from the cluster.
    ServerProcess[] apart = new ServerProcess[2];
    Wrk.Result[] standalone;
    try {
      for (int i = 0; i < 2; i++) {
        Map<String, String> env = new HashMap<>(base);
        env.put("ACKPOINT_REPLICATION_SLOT_NAME", "bench_standalone_" + i);
        apart[i] = ServerProcess.start("standalone-" + i, cluster.ports[i], env);
      }
      standalone = driveBoth(tokens, seconds, quick);
    } finally {
      for (ServerProcess node : apart) {
        if (node != null) {
          node.close();
        }
      }
    }
    cluster.start();
    Wrk.Result[] clustered = driveBoth(tokens, seconds, quick);
    int samples = quick ? 30 : 100;
    AckLatency.Result fromFollower = AckLatency.measure(vertx, cluster.ports[0], cluster.ports[1], token, "from-follower", samples);
    AckLatency.Result toFollower = AckLatency.measure(vertx, cluster.ports[1], cluster.ports[0], token, "to-follower", samples);
    List<Long> killed = new ArrayList<>();
    List<Long> stopped = new ArrayList<>();
    for (int round = 0; round < (quick ? 1 : 3); round++) {
      killed.add(failover(true));
      stopped.add(failover(false));
    }
    return new Result(standalone, clustered, fromFollower, toFollower, killed, stopped);
  }

  /**
   * Warms both nodes up, driven at once as they are measured, then drives them at once, 128
   * connections each. Two JVMs started a moment ago compile their hot paths on the same cores: a
   * few seconds of warm-up measured their compilers (still 28 % of a node's CPU a minute into a
   * load, async-profiler; one comparison's rounds after 30 s rose 9,159 → 11,932 → 15,066 2xx/s).
   */
  private Wrk.Result[] driveBoth(Path tokens, int seconds, boolean quick) throws Exception {
    both(tokens, quick ? 3 : 60);
    return both(tokens, seconds);
  }

  private Wrk.Result[] both(Path tokens, int seconds) {
    return Wrk.runAll(List.of(cluster.ports[0], cluster.ports[1]), "POST", REQUEST, tokens, 128, seconds).toArray(Wrk.Result[]::new);
  }

  /** Kills (or stops) the follower's node, times until the other follows, and starts the first one again. */
  private long failover(boolean kill) throws Exception {
    int follower = ClusterPair.follows(cluster.status(0)) ? 0 : 1;
    int other = 1 - follower;
    long start = System.nanoTime();
    if (kill) {
      cluster.nodes[follower].kill();
    } else {
      cluster.nodes[follower].close();
    }
    cluster.awaitStatus(other, ClusterPair::follows);
    long millis = (System.nanoTime() - start) / 1_000_000;
    System.out.printf(Locale.ROOT, "two nodes: the other node follows %d ms after %s%n", millis, kill ? "SIGKILL" : "SIGTERM");
    cluster.start(follower);
    cluster.awaitStatus(follower, s -> ClusterPair.members(s) == 2);
    return millis;
  }

  private static String both(Wrk.Result[] nodes) {
    return String.format(Locale.ROOT, "%,.0f successful requests/s (%,.0f + %,.0f), p99 %.1f / %.1f ms, non-2xx %s / %s",
        nodes[0].okPerSecond() + nodes[1].okPerSecond(), nodes[0].okPerSecond(), nodes[1].okPerSecond(),
        nodes[0].p99us() / 1000.0, nodes[1].p99us() / 1000.0, nodes[0].non2xx(), nodes[1].non2xx());
  }

  /** The report's section; {@code single}: the single node's row at the same total of connections. */
  static String markdown(Result r, BenchRunner.Row single) {
    StringBuilder md = new StringBuilder("## Two nodes (cluster mode)\n\n");
    md.append("Two Ackpoint processes in cluster mode on loopback (Hazelcast, default `cluster.failover_timeout` of 10s), "
        + "on the same PostgreSQL, on the same cores as the database and wrk: the second node adds no CPU, so this "
        + "shows the cost of the cluster, not its scaling.\n\n");
    md.append(String.format(Locale.ROOT, "- both nodes driven at once (128 connections each, 1000 users): %s; the same two processes "
            + "without the cluster, each on a slot of its own: %s; one node with 256 connections in this run: %,.0f req/s%n",
        both(r.clustered()), both(r.standalone()), single.wrk().okPerSecond()));
    md.append(String.format(Locale.ROOT, "- acknowledgement latency across nodes, idle: request on the follower's node, stream on the "
            + "other: p50 %.1f ms, p99 %.1f ms; request on the other node, stream on the follower's: p50 %.1f ms, p99 %.1f ms%n",
        r.fromFollower().p50ms(), r.fromFollower().p99ms(), r.toFollower().p50ms(), r.toFollower().p99ms()));
    md.append(String.format(Locale.ROOT, "- failover, until the other node's `/admin/status` says `\"follower\":true`: after SIGKILL of the "
        + "follower's node %s ms; after SIGTERM %s ms%n", r.killedMillis(), r.stoppedMillis()));
    return md.toString();
  }
}
