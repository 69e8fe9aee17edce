package io.ackpoint.support;

import io.ackpoint.Ackpoint;
import io.ackpoint.AckpointAddresses;
import io.ackpoint.AckpointOptions;
import io.ackpoint.config.AckpointConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/** Configurations and running servers for tests: real HTTP on a free loopback port, a real database. */
public final class TestAckpoint {

  /** The addresses of an Ackpoint with the default prefix. */
  public static final AckpointAddresses ADDRESSES = new AckpointAddresses(AckpointAddresses.DEFAULT_PREFIX);

  private TestAckpoint() {
  }

  /** The file layer of a test configuration on {@code databaseUri}; tests add their own keys. */
  public static JsonObject configJson(String databaseUri) {
    return new JsonObject()
        .put("http", new JsonObject().put("host", "127.0.0.1").put("port", freePort()).put("instances", 2))
        .put("auth", new JsonObject().put("audience", AUDIENCES).put("jwks", TestKeys.jwks()))
        .put("source", new JsonObject().put("type", "postgresql").put("uri", databaseUri))
        .put("storage", new JsonObject().put("type", "postgresql").put("uri", databaseUri))
        .put("replication", new JsonObject().put("follower", false));
  }

  private static final java.util.concurrent.atomic.AtomicInteger SLOTS = new java.util.concurrent.atomic.AtomicInteger();

  /**
   * Turns the built-in follower on, with a slot of its own: slots are cluster-wide and the tests
   * share one server.
   */
  public static JsonObject withFollower(JsonObject config) {
    String slot = "ackpoint_test_" + SLOTS.incrementAndGet() + "_" + ProcessHandle.current().pid();
    config.put("replication", new JsonObject().put("follower", true).put("slot_name", slot).put("heartbeat_interval", "5s"));
    return config;
  }

  /** Makes the source a MongoDB database ({@link TestMongo}). */
  public static JsonObject withMongoSource(JsonObject config, String uri) {
    return config.put("source", new JsonObject().put("type", "mongodb").put("uri", uri));
  }

  /** Makes storage a MongoDB database ({@link TestMongo}). */
  public static JsonObject withMongoStorage(JsonObject config, String uri) {
    return config.put("storage", new JsonObject().put("type", "mongodb").put("uri", uri));
  }

  /** Source and storage on one fresh MongoDB database of the test server. */
  public static JsonObject onMongo(String uri) {
    return withMongoStorage(withMongoSource(configJson(uri), uri), uri);
  }

  public static String slotOf(JsonObject config) {
    return config.getJsonObject("replication").getString("slot_name");
  }

  public static int portOf(JsonObject config) {
    return config.getJsonObject("http").getInteger("port");
  }

  private static final io.vertx.core.json.JsonArray AUDIENCES = new io.vertx.core.json.JsonArray().add(TestKeys.AUDIENCE);

  public static AckpointConfig config(JsonObject json) {
    return new AckpointOptions(json).toConfig();
  }

  public static Future<Ackpoint> start(Vertx vertx, JsonObject config) {
    return Ackpoint.deploy(vertx, new AckpointOptions(config));
  }

  /**
   * A port no listener holds, below the range the system hands out to outgoing connections: a port
   * of that range, free when it was chosen, was taken as the source port of a connection (Hazelcast's,
   * the database's) before the node that was to listen on it started (CI: ClusterTest, "Address
   * already in use"). Never the same port twice in a run.
   */
  public static int freePort() {
    int floor = ephemeralFloor();
    for (int attempt = 0; attempt < 1000; attempt++) {
      int port = LOWEST_PORT + ThreadLocalRandom.current().nextInt(floor - LOWEST_PORT);
      if (!HANDED_OUT.add(port)) {
        continue;
      }
      try (ServerSocket socket = new ServerSocket(port)) {
        return port;
      } catch (IOException taken) {
        // A listener holds it: another one.
      }
    }
    throw new IllegalStateException("no free port from " + LOWEST_PORT + " to " + floor);
  }

  private static final int LOWEST_PORT = 10_000;
  private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

  /** The first port of ip_local_port_range (32768 where it cannot be read). */
  private static int ephemeralFloor() {
    try {
      String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
      int floor = Integer.parseInt(range.split("\\s+")[0]);
      return floor > LOWEST_PORT + 1_000 ? floor : 32_768;
    } catch (IOException | RuntimeException unknown) {
      return 32_768;
    }
  }
}
