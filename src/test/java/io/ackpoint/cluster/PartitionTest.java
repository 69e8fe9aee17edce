package io.ackpoint.cluster;

import io.ackpoint.support.AckpointProcess;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TcpProxy;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static io.ackpoint.cluster.ClusterNodes.awaitStatus;
import static io.ackpoint.cluster.ClusterNodes.follows;
import static io.ackpoint.cluster.ClusterNodes.members;
import static io.ackpoint.cluster.ClusterNodes.request;
import static io.ackpoint.cluster.NetworkNamespaces.CLUSTER_A;
import static io.ackpoint.cluster.NetworkNamespaces.CLUSTER_B;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Two nodes in network namespaces of the test's own making, each still reaching PostgreSQL (through
 * a proxy in the root namespace) and the test, while the link between them is cut: each side
 * believes the other dead and the cut-off node takes the follower lock of its own side, yet never
 * do two followers run, because the slot lets one connection stream at a time. Once the link is
 * back, the cluster merges and settles on one follower again.
 */
class PartitionTest {

  private static final int HTTP_PORT = 8080;
  private static final int CLUSTER_PORT = 5701;

  @Test
  void aCutOffNodeNeverBecomesASecondFollower() throws Exception {
    assumeTrue(NetworkNamespaces.available(), "network namespaces need root and iproute2");
    Vertx vertx = Vertx.vertx();
    String database = TestDatabase.freshDatabase();
    String slot = ClusterNodes.freshSlot();
    TcpProxy postgres = TcpProxy.start(vertx, "127.0.0.1", TestDatabase.port(), "0.0.0.0");
    List<String> members = List.of(CLUSTER_A + ":" + CLUSTER_PORT, CLUSTER_B + ":" + CLUSTER_PORT);
    try (NetworkNamespaces ns = NetworkNamespaces.create();
         AckpointProcess a = node(ns, true, database, slot, postgres, members);
         AckpointProcess b = node(ns, false, database, slot, postgres, members);
         FollowerWatch watch = new FollowerWatch(a, b)) {
      awaitStatus(a, Duration.ofSeconds(60), s -> follows(s) && members(s) == 2);
      awaitStatus(b, Duration.ofSeconds(60), s -> members(s) == 2);

      ns.clusterLink(false);
      int samplesAtCut = watch.samples();
      // Each side removes the other; the cut-off node wins the lock of its side and starts a follower,
      // which PostgreSQL refuses while the first one streams.
      JsonObject cutOff = awaitStatus(b, Duration.ofSeconds(60), s -> members(s) == 1 && s.getBoolean("leader"));
      awaitStatus(a, Duration.ofSeconds(60), s -> members(s) == 1);
      awaitRefused(b);
      // Its follower keeps being refused for a while; the side that follows keeps acknowledging.
      awaitStatus(b, Duration.ofSeconds(10), s -> !follows(s) && s.getBoolean("leader"));
      assertTrue(request(a, "p1", "c", 1, 20).getBoolean("acknowledged"));
      assertTrue(follows(ClusterNodes.status(a)), cutOff.encode());

      // The watch has looked at both nodes while they were apart, not only before and after.
      watch.awaitSamples(samplesAtCut + 3);
      ns.clusterLink(true);
      // Merged: one node leads and follows, the other stands by, and acknowledgements cross again.
      awaitStatus(a, Duration.ofSeconds(90), s -> members(s) == 2);
      awaitStatus(b, Duration.ofSeconds(90), s -> members(s) == 2);
      AckpointProcess follower = awaitOneLeader(a, b);
      AckpointProcess other = follower == a ? b : a;
      try (StreamClient stream = StreamClient.syncStream(vertx, other.host(), other.port(), TestKeys.token("p2"), "c")) {
        stream.nextMatching(line -> line.containsKey("checkpoint_complete"));
        request(follower, "p2", "c", 1, 0);
        assertEquals("1", stream.nextMatching(line -> line.containsKey("checkpoint_diff"))
            .getJsonObject("checkpoint_diff").getString("write_checkpoint"));
      }
      assertEquals(List.of(), watch.violations());
      System.out.println("follower watch: " + watch.samples() + " samples, " + watch.failures().size() + " not answered");
    } finally {
      postgres.close();
      vertx.close().await();
    }
  }

  private static AckpointProcess node(NetworkNamespaces ns, boolean inA, String database, String slot, TcpProxy postgres,
                                      List<String> members) throws IOException, InterruptedException {
    String uri = database.replaceFirst("localhost:\\d+", (inA ? NetworkNamespaces.ROOT_A : NetworkNamespaces.ROOT_B) + ":" + postgres.port());
    Map<String, String> env = ClusterNodes.env(uri, slot, "0.0.0.0", HTTP_PORT, inA ? CLUSTER_A : CLUSTER_B, CLUSTER_PORT, members);
    AckpointProcess node = AckpointProcess.start(env, ns.exec(inA), inA ? NetworkNamespaces.HOST_A : NetworkNamespaces.HOST_B);
    node.awaitReady(Duration.ofSeconds(120));
    return node;
  }

  /** Polls the cut-off node's readiness until its follower has been refused the slot: 503, "in use". */
  private static void awaitRefused(AckpointProcess node) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    String last = "";
    while (System.nanoTime() < deadline) {
      var readiness = node.get("/probes/readiness");
      last = readiness.statusCode() + " " + readiness.body();
      if (readiness.statusCode() == 503 && readiness.body().contains("in use")) {
        return;
      }
      Thread.sleep(100);
    }
    throw new AssertionError("the cut-off node's follower was never refused the slot: " + last);
  }

  /** Polls until exactly one node leads and follows, the other neither; answers the follower. */
  private static AckpointProcess awaitOneLeader(AckpointProcess a, AckpointProcess b) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    String last = "";
    while (System.nanoTime() < deadline) {
      JsonObject sa = ClusterNodes.status(a);
      JsonObject sb = ClusterNodes.status(b);
      last = sa.encode() + " / " + sb.encode();
      if (follows(sa) && sa.getBoolean("leader") && !sb.getBoolean("leader")) {
        return a;
      }
      if (follows(sb) && sb.getBoolean("leader") && !sa.getBoolean("leader")) {
        return b;
      }
      Thread.sleep(100);
    }
    throw new AssertionError("the merged cluster did not settle on one follower: " + last);
  }

  /**
   * Samples both nodes' status until closed. A violation is node A following both before and after
   * node B says it follows (so not a handover seen between two requests). What the source allows
   * needs no watching: PostgreSQL lets one connection at a time stream from a slot.
   */
  private static final class FollowerWatch implements AutoCloseable {

    private final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean stopped;
    private int samples;

    FollowerWatch(AckpointProcess a, AckpointProcess b) {
      thread = new Thread(() -> {
        while (!stopped) {
          try {
            long start = System.nanoTime();
            JsonObject before = ClusterNodes.status(a);
            long atMiddle = System.nanoTime();
            JsonObject middle = ClusterNodes.status(b);
            long atAfter = System.nanoTime();
            JsonObject after = ClusterNodes.status(a);
            long end = System.nanoTime();
            if (follows(before) && follows(middle) && follows(after)) {
              // With the answers and when each came, so that a failure can be told from a handover
              // back and forth between slow answers.
              violations.add("both nodes followed at once: A " + before.encode() + " then B (+" + millis(atMiddle - start)
                  + " ms) " + middle.encode() + " then A (+" + millis(atAfter - start) + " ms) " + after.encode()
                  + ", done +" + millis(end - start) + " ms");
            }
            synchronized (this) {
              samples++;
              notifyAll();
            }
            Thread.sleep(50);
          } catch (InterruptedException e) {
            return;
          } catch (Exception | AssertionError notAnswering) {
            // a node busy merging may not answer; the next sample will
            failures.add(notAnswering.toString());
          }
        }
      }, "follower-watch");
      thread.start();
    }

    private static long millis(long nanos) {
      return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    List<String> violations() {
      return List.copyOf(violations);
    }

    synchronized int samples() {
      return samples;
    }

    /** Waits, bounded, for {@code count} completed samples in all (taken on the watch's own thread). */
    synchronized void awaitSamples(int count) throws InterruptedException {
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (samples < count) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError("the watch took " + samples + " of " + count + " samples; not answered: " + failures);
        }
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
    }

    /** Why the samples that did not complete did not. */
    List<String> failures() {
      return List.copyOf(failures);
    }

    @Override
    public void close() throws InterruptedException {
      stopped = true;
      thread.join(10_000);
    }
  }
}
