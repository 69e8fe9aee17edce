package io.ackpoint.cluster;

import io.ackpoint.support.AckpointProcess;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Ackpoint nodes as processes of their own ({@code io.ackpoint.Main}, each its own JVM and Hazelcast
 * member), in cluster mode on one test database, and what the cluster tests ask of them.
 */
final class ClusterNodes {

  static final String ADMIN_TOKEN = "cluster-test-admin-token";
  /** Short, so that the tests see failover quickly; the default is 10s. */
  static final String FAILOVER_TIMEOUT = "4s";
  private static final AtomicInteger SLOTS = new AtomicInteger();

  private ClusterNodes() {
  }

  /** A replication slot of its own for each cluster: slots are per server and the tests share one. */
  static String freshSlot() {
    return "ackpoint_cluster_" + SLOTS.incrementAndGet() + "_" + ProcessHandle.current().pid();
  }

  /**
   * A node's environment: HTTP on {@code httpHost:httpPort}, Hazelcast bound to
   * {@code clusterHost:clusterPort}, joining {@code members}.
   */
  static Map<String, String> env(String databaseUri, String slot, String httpHost, int httpPort, String clusterHost,
                                 int clusterPort, List<String> members) {
    Map<String, String> env = new HashMap<>();
    env.put("ACKPOINT_CONFIG", "conf/ackpoint.yaml");
    env.put("ACKPOINT_HTTP_HOST", httpHost);
    env.put("ACKPOINT_HTTP_PORT", Integer.toString(httpPort));
    env.put("ACKPOINT_HTTP_EVENT_LOOPS", "2");
    env.put("ACKPOINT_AUTH_AUDIENCE", TestKeys.AUDIENCE);
    env.put("ACKPOINT_AUTH_JWKS", TestKeys.jwks().encode());
    env.put("ACKPOINT_SOURCE_TYPE", "postgresql");
    env.put("ACKPOINT_SOURCE_URI", databaseUri);
    env.put("ACKPOINT_STORAGE_TYPE", "postgresql");
    env.put("ACKPOINT_STORAGE_URI", databaseUri);
    env.put("ACKPOINT_REPLICATION_SLOT_NAME", slot);
    env.put("ACKPOINT_REPLICATION_HEARTBEAT_INTERVAL", "5s");
    env.put("ACKPOINT_ADMIN_TOKEN", ADMIN_TOKEN);
    env.put("ACKPOINT_SHUTDOWN_TIMEOUT", "10s");
    env.put("ACKPOINT_CLUSTER_ENABLED", "true");
    env.put("ACKPOINT_CLUSTER_HOST", clusterHost);
    env.put("ACKPOINT_CLUSTER_PORT", Integer.toString(clusterPort));
    env.put("ACKPOINT_CLUSTER_MEMBERS", String.join(",", members));
    env.put("ACKPOINT_CLUSTER_FAILOVER_TIMEOUT", FAILOVER_TIMEOUT);
    return env;
  }

  /** The {@code data} of {@code GET /admin/status}. */
  static JsonObject status(AckpointProcess node) throws IOException, InterruptedException {
    HttpResponse<String> response = node.get("/admin/status", Map.of("Authorization", "Bearer " + ADMIN_TOKEN));
    assertEquals(200, response.statusCode(), response.body());
    return new JsonObject(response.body()).getJsonObject("data");
  }

  /**
   * Polls a node's status until it matches: another process gives nothing else to await. Bounded;
   * a node that is not answering (yet) counts as not matching.
   */
  static JsonObject awaitStatus(AckpointProcess node, Duration timeout, Predicate<JsonObject> until)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    JsonObject last = null;
    String failure = null;
    while (System.nanoTime() < deadline) {
      try {
        last = status(node);
        if (until.test(last)) {
          return last;
        }
      } catch (IOException | AssertionError e) {
        failure = e.toString();
      }
      Thread.sleep(50);
    }
    throw new AssertionError("the status of the node on port " + node.port() + " never matched within "
        + timeout.toSeconds() + " s; last answer: " + last + (failure != null ? ", last failure: " + failure : ""));
  }

  static boolean follows(JsonObject status) {
    return status.getBoolean("follower");
  }

  static int members(JsonObject status) {
    return status.getJsonObject("cluster").getInteger("members");
  }

  /** {@code POST /sync/checkpoint-request?wait=S}: the answer's {@code data}, which must be a 200. */
  static JsonObject request(AckpointProcess node, String user, String clientId, long id, int waitSeconds)
      throws IOException, InterruptedException {
    HttpResponse<String> response = node.post("/sync/checkpoint-request" + (waitSeconds > 0 ? "?wait=" + waitSeconds : ""),
        TestKeys.token(user), new JsonObject().put("client_id", clientId).put("checkpoint_request_id", Long.toString(id)).encode());
    assertEquals(200, response.statusCode(), response.body());
    return new JsonObject(response.body()).getJsonObject("data");
  }

  /** How many connections stream from {@code slot} now, as PostgreSQL sees it: never more than one. */
  static int activeFollowers(String databaseUri, String slot) throws SQLException {
    String database = databaseUri.substring(databaseUri.lastIndexOf('/') + 1);
    try (Connection c = DriverManager.getConnection(TestDatabase.jdbcUri(database), "postgres", "");
         PreparedStatement s = c.prepareStatement("SELECT count(*) FROM pg_replication_slots WHERE slot_name = ? AND active")) {
      s.setString(1, slot);
      try (ResultSet rows = s.executeQuery()) {
        rows.next();
        return rows.getInt(1);
      }
    }
  }
}
