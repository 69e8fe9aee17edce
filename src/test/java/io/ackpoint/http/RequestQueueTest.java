package io.ackpoint.http;

import io.ackpoint.Ackpoint;
import io.ackpoint.config.AckpointConfig.QueueLimits;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(VertxExtension.class)
class RequestQueueTest {

  @Test
  void waitersRunInArrivalOrderAsSlotsAreReleased(Vertx vertx, VertxTestContext test) {
    RequestQueue queue = new RequestQueue("test", new QueueLimits(1, 2));
    Context context = vertx.getOrCreateContext();
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
  void aFullQueueAnswers429WithRetryAfterAndRecoversAtOnce(Vertx vertx) {
    JsonObject json = TestAckpoint.configJson(TestDatabase.freshDatabase());
    json.getJsonObject("http").put("queues", new JsonObject()
        .put("checkpointing", new JsonObject().put("concurrency", 1).put("max_queue_depth", 0)));
    Ackpoint ackpoint = Await.result(Ackpoint.start(vertx, TestAckpoint.config(json)));
    ApiClient api = new ApiClient(vertx, json.getJsonObject("http").getInteger("port"));
    String token = TestKeys.token(vertx, "busy");
    try {
      // Occupy the only slot, as a long request would.
      RequestQueue queue = ackpoint.queues().checkpointing();
      queue.enter(vertx.getOrCreateContext(), () -> { });

      HttpResponse<Buffer> rejected = api.writeCheckpoint2(token, "c1");
      assertEquals(429, rejected.statusCode());
      assertEquals("1", rejected.getHeader("Retry-After"));
      assertEquals("ACK_TOO_MANY_REQUESTS", ApiClient.errorCode(rejected));
      assertTrue(ackpoint.metrics().scrape().contains("ackpoint_http_rejected_total{group=\"checkpointing\"} 1.0"));

      queue.release();
      assertEquals(200, api.writeCheckpoint2(token, "c1").statusCode());
    } finally {
      Await.result(ackpoint.close());
    }
  }
}
