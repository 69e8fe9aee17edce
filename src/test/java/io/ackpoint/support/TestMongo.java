package io.ackpoint.support;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One MongoDB wire-compatible server for the whole test run: mongo-java-server, in memory, with its
 * oplog on so that change streams work (no real mongod can be installed where the tests run), and a
 * fresh database in it for each test that asks. What it cannot do is listed in README, MongoDB.
 */
public final class TestMongo {

  private static final AtomicInteger DATABASES = new AtomicInteger();
  private static MongoServer server;
  private static String address;

  private TestMongo() {
  }

  private static synchronized String address() {
    if (server == null) {
      MongoServer started = new MongoServer(new MemoryBackend());
      started.enableOplog();
      // A free port on loopback, chosen by the operating system.
      address = started.bindAndGetConnectionString();
      server = started;
      Runtime.getRuntime().addShutdownHook(new Thread(started::shutdownNow));
    }
    return address;
  }

  /** The URI of an empty database of its own, as {@code storage.uri} or {@code source.uri}. */
  public static String freshDatabase() {
    return address() + "/ackpoint_test_" + DATABASES.incrementAndGet();
  }

  /**
   * A second server without an oplog: it answers everything, but can open no change stream, as a
   * standalone mongod cannot. The caller shuts it down.
   */
  public static MongoServer withoutOplog() {
    MongoServer standalone = new MongoServer(new MemoryBackend());
    standalone.bind("127.0.0.1", 0);
    return standalone;
  }
}
