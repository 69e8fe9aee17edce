package io.ackpoint.cluster;

import io.ackpoint.support.AckpointProcess;
import io.ackpoint.support.TestKeys;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Clients sending checkpoint requests that await their acknowledgement ({@code ?wait}), each its own
 * user with increasing ids, spread over the nodes. A request that fails (its node is stopping or
 * dead) is sent again, the same id, to the next node, as a client behind a load balancer would. An
 * answer of {@code "acknowledged": false} is an acknowledgement lost: none may be; nor may any
 * answer but 503 or 429, the ones that say "try again".
 */
final class Traffic implements AutoCloseable {

  private static final int WAIT_SECONDS = 30;

  private final List<AckpointProcess> nodes;
  private final List<Thread> clients = new ArrayList<>();
  /** Guards {@code acknowledged}; notified at every acknowledgement. */
  private final Object progress = new Object();
  private int acknowledged;
  private final AtomicInteger retried = new AtomicInteger();
  private final ConcurrentLinkedQueue<String> lost = new ConcurrentLinkedQueue<>();
  private volatile boolean stopped;

  /** {@code nodes}: read at every request; the test may replace a node in it (a thread-safe list). */
  Traffic(List<AckpointProcess> nodes, int users, String prefix) {
    this.nodes = nodes;
    for (int u = 0; u < users; u++) {
      String user = prefix + "-" + u;
      int first = u;
      Thread client = new Thread(() -> run(user, first), "traffic-" + user);
      clients.add(client);
      client.start();
    }
  }

  private void run(String user, int firstNode) {
    String token = TestKeys.token(user);
    int node = firstNode;
    long id = 1;
    while (!stopped) {
      AckpointProcess target = nodes.get(node % nodes.size());
      node++;
      try {
        HttpResponse<String> response = target.post("/sync/checkpoint-request?wait=" + WAIT_SECONDS, token,
            new JsonObject().put("client_id", "c").put("checkpoint_request_id", Long.toString(id)).encode());
        if (response.statusCode() == 200) {
          if (new JsonObject(response.body()).getJsonObject("data").getBoolean("acknowledged")) {
            synchronized (progress) {
              acknowledged++;
              progress.notifyAll();
            }
          } else {
            lost.add(user + " id " + id + " on port " + target.port());
          }
          id++;
          continue;
        }
        if (response.statusCode() != 503 && response.statusCode() != 429) {
          // Only "unavailable, try again" is a node's fair answer while nodes come and go.
          lost.add(user + " id " + id + " on port " + target.port() + ": " + response.statusCode() + " " + response.body());
        }
      } catch (IOException e) {
        // the node is stopping or gone: the same id goes to the next node
      } catch (InterruptedException e) {
        return;
      }
      retried.incrementAndGet();
      pause();
    }
  }

  /** A client's back-off before its retry, so that a moment with no node up is not a busy loop. */
  private static void pause() {
    try {
      Thread.sleep(20);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Stops sending; waits for the requests in flight (at most their wait). */
  @Override
  public void close() throws InterruptedException {
    stopped = true;
    for (Thread client : clients) {
      client.join((WAIT_SECONDS + 35) * 1000L);
    }
  }

  int acknowledged() {
    synchronized (progress) {
      return acknowledged;
    }
  }

  /** Returns once {@code count} requests in all were acknowledged; fails, naming what was lost, after {@code timeout}. */
  void awaitAcknowledged(int count, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (progress) {
      while (acknowledged < count) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError("only " + acknowledged + " of " + count + " acknowledged; lost: " + lost());
        }
        TimeUnit.NANOSECONDS.timedWait(progress, left);
      }
    }
  }

  int retried() {
    return retried.get();
  }

  List<String> lost() {
    return List.copyOf(lost);
  }
}
