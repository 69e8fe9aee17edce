package io.ackpoint.http;

import io.ackpoint.config.AckpointConfig.QueueLimits;
import io.ackpoint.support.Await;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(VertxExtension.class)
class RequestQueueTest {

  @Test
  void waitersRunInArrivalOrderAsSlotsAreReleased(Vertx vertx, VertxTestContext test) {
    RequestQueue queue = new RequestQueue("test", new QueueLimits(1, 2, Duration.ofSeconds(30)));
    Context context = vertx.getOrCreateContext();
    // On the waiters' own event loop, so that they run only after the assertions below.
    context.runOnContext(v -> test.verify(() -> enterAndRelease(queue, context, test)));
  }

  private static void enterAndRelease(RequestQueue queue, Context context, VertxTestContext test) {
    List<String> ran = new ArrayList<>();
    assertEquals(RequestQueue.Admission.RUNNING, queue.enter(context, () -> ran.add("a")));
    assertEquals(RequestQueue.Admission.QUEUED, queue.enter(context, () -> ran.add("b")));
    assertEquals(RequestQueue.Admission.QUEUED, queue.enter(context, () -> {
      ran.add("c");
      // The last waiter is done: its release gives the slot back.
      queue.release();
      test.verify(() -> {
        assertEquals(List.of("a", "b", "c"), ran);
        assertEquals(0, queue.running());
        assertEquals(0, queue.waiting());
      });
      test.completeNow();
    }));
    assertEquals(RequestQueue.Admission.REJECTED, queue.enter(context, () -> ran.add("d")));
    assertEquals(List.of("a"), ran);
    assertEquals(1, queue.rejected());
    assertEquals(2, queue.waiting());
    // A released slot passes straight to the oldest waiter: running stays at the limit meanwhile.
    queue.release();
    assertEquals(1, queue.running());
    assertEquals(1, queue.waiting());
    queue.release();
    assertEquals(1, queue.running());
  }

  @Test
  void aWithdrawnWaiterNeverRunsAndCountsAsRefused(Vertx vertx) {
    RequestQueue queue = new RequestQueue("test", new QueueLimits(1, 2, Duration.ofSeconds(30)));
    Context context = vertx.getOrCreateContext();
    List<String> ran = new ArrayList<>();
    Runnable b = () -> ran.add("b");
    assertEquals(RequestQueue.Admission.RUNNING, queue.enter(context, () -> ran.add("a")));
    assertEquals(RequestQueue.Admission.QUEUED, queue.enter(context, b));
    assertTrue(queue.withdraw(b));
    assertFalse(queue.withdraw(b), "withdrawn once");
    assertEquals(0, queue.waiting());
    assertEquals(1, queue.rejected());
    queue.release();
    assertEquals(0, queue.running());
    assertEquals(List.of("a"), ran);
  }

  @Test
  void aRequestThatWaitedMaxWaitForASlotIsAnswered429WithRetryAfter(Vertx vertx) {
    try (RunningAckpoint app = RunningAckpoint.fresh(vertx, config -> {
      config.getJsonObject("http").put("queues", new JsonObject()
          .put("stream", new JsonObject().put("concurrency", 1).put("max_queue_depth", 1).put("max_wait", "200ms")));
      return config;
    })) {
      try (StreamClient holder = app.stream(TestKeys.token(vertx, "holder"), "c1")) {
        assertEquals(200, holder.status());
        // Queued behind a stream whose token lives for minutes: answered when max_wait is up.
        try (StreamClient queued = app.stream(TestKeys.token(vertx, "queued"), "c2")) {
          assertEquals(429, queued.status());
          assertEquals("1", queued.header("Retry-After"));
        }
        assertTrue(app.metrics().contains("ackpoint_http_rejected_total{group=\"stream\"} 1.0"));
      }
    }
  }

  @Test
  void aFullQueueAnswers429WithRetryAfterAndRecoversAtOnce(Vertx vertx) {
    try (RunningAckpoint app = RunningAckpoint.fresh(vertx, config -> {
      config.getJsonObject("http").put("queues", new JsonObject()
          .put("stream", new JsonObject().put("concurrency", 1).put("max_queue_depth", 0)));
      return config;
    })) {
      // A stream holds the only slot for as long as its token lives: two seconds.
      long exp = java.time.Instant.now().getEpochSecond() + 2;
      String brief = TestKeys.sign(vertx, TestKeys.KID, TestKeys.SECRET, TestKeys.claims("busy").put("exp", exp));
      try (StreamClient holder = app.stream(brief, "c1")) {
        assertEquals(200, holder.status());
        try (StreamClient refused = app.stream(TestKeys.token(vertx, "busy"), "c2")) {
          assertEquals(429, refused.status());
          assertEquals("1", refused.header("Retry-After"));
        }
        assertTrue(app.metrics().contains("ackpoint_http_rejected_total{group=\"stream\"} 1.0"));
        // The server ends the stream at token expiry, which gives the slot back with the response.
        holder.awaitEnd();
      }
      try (StreamClient next = app.stream(TestKeys.token(vertx, "busy"), "c3")) {
        assertEquals(200, next.status());
      }
    }
  }
  /**
   * Clients that reset their connections while their requests wait for slots: every slot comes back.
   * A reset is reported to Vert.x Web (which ends the request) a moment before the response says it
   * is closed, and a waiter given its slot in between took it for a live request (see RequestEnd).
   * Several rounds, since a round shows it only when a hand-over lands in that moment.
   */
  @Test
  void queuedRequestsWhoseClientsResetGiveEverySlotBack(Vertx vertx) throws Exception {
    try (RunningAckpoint app = RunningAckpoint.fresh(vertx, config -> {
      config.getJsonObject("http").put("queues", new JsonObject()
          .put("stream", new JsonObject().put("concurrency", 3).put("max_queue_depth", 17).put("max_wait", "60s")));
      return config;
    })) {
      String token = TestKeys.token(vertx, "resets");
      byte[] body = "{\"client_id\":\"c\"}".getBytes(StandardCharsets.UTF_8);
      byte[] request = ("POST /sync/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Token " + token
          + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n" + new String(body, StandardCharsets.UTF_8))
          .getBytes(StandardCharsets.UTF_8);
      for (int round = 0; round < 5; round++) {
        List<Socket> clients = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
          Socket client = new Socket("127.0.0.1", app.port());
          client.getOutputStream().write(request);
          clients.add(client);
        }
        awaitQueues(vertx, app, 3, 17);
        for (Socket client : clients) {
          client.setSoLinger(true, 0); // closed with a reset
          client.close();
        }
        awaitQueues(vertx, app, 0, 0);
      }
    }
  }

  /** Waits until the stream group runs {@code running} requests and queues {@code waiting}, as its metrics say. */
  private static void awaitQueues(Vertx vertx, RunningAckpoint app, int running, int waiting) {
    String expected = "ackpoint_http_running{group=\"stream\"} " + running + ".0";
    String expectedWaiting = "ackpoint_http_waiting{group=\"stream\"} " + waiting + ".0";
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    String metrics = app.metrics();
    while (!(metrics.contains(expected) && metrics.contains(expectedWaiting))) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("the stream queue never ran " + running + " and queued " + waiting + ": "
            + metrics.lines().filter(l -> l.startsWith("ackpoint_http_running") || l.startsWith("ackpoint_http_waiting")).toList());
      }
      Await.result(vertx.timer(10)); // polls the metrics: nothing to await but their next value
      metrics = app.metrics();
    }
  }
}
