package io.ackpoint.bench;

import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Two Ackpoint processes in cluster mode on loopback (Hazelcast, the default
 * {@code cluster.failover_timeout}), one replication slot between them: what the bench's two-node
 * case and the comparison's two-node case run. {@code base} must set the admin token
 * {@value #ADMIN}: readiness says nothing of the cluster, {@code /admin/status} does.
 */
final class ClusterPair implements AutoCloseable {

  static final String ADMIN = "bench";

  private final Map<String, String> base;
  private final String slot;
  private final Path jar;
  final int[] ports;
  final ServerProcess[] nodes = new ServerProcess[2];

  /** {@code jar}: the build to run (another than target/ackpoint.jar for before/after comparisons). */
  ClusterPair(Map<String, String> base, String slot, int firstPort, Path jar) {
    this.base = base;
    this.slot = slot;
    this.jar = jar;
    this.ports = new int[] {firstPort, firstPort + 1};
  }

  /** Starts node 0 until it follows the slot, then node 1 until it sees both members. */
  void start() throws Exception {
    start(0);
    awaitStatus(0, ClusterPair::follows);
    start(1);
    awaitStatus(1, s -> members(s) == 2);
  }

  /** Starts node {@code i} (again, after {@link ServerProcess#kill()} or {@link ServerProcess#close()} of it). */
  void start(int i) throws Exception {
    Map<String, String> env = new HashMap<>(base);
    env.put("ACKPOINT_REPLICATION_SLOT_NAME", slot);
    env.put("ACKPOINT_CLUSTER_ENABLED", "true");
    env.put("ACKPOINT_CLUSTER_PORT", Integer.toString(clusterPort(i)));
    env.put("ACKPOINT_CLUSTER_MEMBERS", "127.0.0.1:" + clusterPort(0) + ",127.0.0.1:" + clusterPort(1));
    nodes[i] = ServerProcess.start("node-" + i, ports[i], env, jar);
  }

  private int clusterPort(int i) {
    return ports[0] + 10 + i;
  }

  JsonObject status(int i) throws Exception {
    var response = nodes[i].get("/admin/status", ADMIN);
    if (response.statusCode() != 200) {
      throw new IllegalStateException("status " + response.statusCode() + ": " + response.body());
    }
    return new JsonObject(response.body()).getJsonObject("data");
  }

  static boolean follows(JsonObject status) {
    return status.getBoolean("follower");
  }

  static int members(JsonObject status) {
    return status.getJsonObject("cluster").getInteger("members");
  }

  /** Polls another process's status: nothing else to await. Bounded. */
  void awaitStatus(int i, Predicate<JsonObject> until) throws Exception {
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (System.nanoTime() < deadline) {
      try {
        if (until.test(status(i))) {
          return;
        }
      } catch (IOException | IllegalStateException notAnswering) {
        // a node starting or recovering its cluster view answers later
      }
      Thread.sleep(20);
    }
    throw new IllegalStateException("node " + i + " never reached the awaited state");
  }

  @Override
  public void close() {
    for (ServerProcess node : nodes) {
      if (node != null) {
        node.close();
      }
    }
  }
}
