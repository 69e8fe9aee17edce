package io.ackpoint.support;

import io.ackpoint.Ackpoint;
import io.ackpoint.AckpointAddresses;
import io.ackpoint.AckpointOptions;
import io.ackpoint.config.AckpointConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

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

  public static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
