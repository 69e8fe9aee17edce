package io.ackpoint.support;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.bson.Document;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One MongoDB wire-compatible server for the whole test run: mongo-java-server, in memory, with its
 * oplog on so that change streams work (no real mongod can be installed where the tests run), and a
 * fresh database in it for each test that asks. What it cannot do is listed in README, MongoDB.
 */
public final class TestMongo {

  private static final AtomicInteger DATABASES = new AtomicInteger();
  /** Connections are spread over this many server threads, which a waiting getMore holds (see below). */
  private static final int SERVER_THREADS = 32;
  private static MongoServer server;
  private static String address;

  private TestMongo() {
  }

  private static synchronized String address() {
    if (server == null) {
      MongoServer started = new MongoServer(new AwaitingBackend());
      started.enableOplog();
      // A free port on loopback, chosen by the operating system.
      started.bind(new InetSocketAddress("127.0.0.1", 0), 1, SERVER_THREADS);
      address = started.getConnectionString();
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

  /**
   * MongoDB answers a change stream's getMore with an empty batch only after waiting up to
   * {@code maxAwaitTimeMS} (one second by default) for an event; mongo-java-server answers at once,
   * so a driver following it would loop without pause and keep a core busy for as long as an
   * Ackpoint follows it. This backend waits too, briefly, looking at its oplog again meanwhile. Only
   * the pacing changes, never an answer.
   */
  private static final class AwaitingBackend extends MemoryBackend {

    private static final long AWAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    @Override
    protected Document handleGetMore(String databaseName, String command, Document query) {
      long deadline = System.nanoTime() + AWAIT_NANOS;
      Document reply = super.handleGetMore(databaseName, command, query);
      int seen = oplogEntries();
      while (emptyButOpen(reply) && System.nanoTime() < deadline) {
        try {
          Thread.sleep(5);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return reply;
        }
        // Reading the cursor again scans the whole oplog: only when something was written since.
        int now = oplogEntries();
        if (now != seen) {
          seen = now;
          reply = super.handleGetMore(databaseName, command, query);
        }
      }
      return reply;
    }

    private int oplogEntries() {
      return resolveDatabase("local").resolveCollection(OPLOG_COLLECTION_NAME, true).count();
    }

    private static boolean emptyButOpen(Document reply) {
      Document cursor = (Document) reply.get("cursor");
      return cursor != null && ((Number) cursor.get("id")).longValue() != 0
          && cursor.get("nextBatch") instanceof List<?> batch && batch.isEmpty();
    }
  }
}
