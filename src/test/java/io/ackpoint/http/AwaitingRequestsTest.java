package io.ackpoint.http;

import io.ackpoint.support.AckpointExtension;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Requests that await their acknowledgement ({@code ?wait=}, and the legacy route's wait for a head)
 * leave their checkpointing slot once their write is done: however long replication lags, they do
 * not keep other requests out.
 */
@ExtendWith(VertxExtension.class)
class AwaitingRequestsTest {

  private static final int CONCURRENCY = 2;

  // No follower: nothing is ever acknowledged, so every awaiting request waits its whole wait.
  @RegisterExtension
  final AckpointExtension app = AckpointExtension.with(config -> {
    config.getJsonObject("http").put("queues", new JsonObject()
        .put("checkpointing", new JsonObject().put("concurrency", CONCURRENCY).put("max_queue_depth", 8)));
    return config;
  });

  @Test
  void requestsAwaitingReplicationDoNotKeepOtherCheckpointRequestsOut(Vertx vertx, VertxTestContext test) {
    WebClient client = WebClient.create(vertx, new WebClientOptions().setDefaultPort(app.running().port()));
    List<Future<HttpResponse<Buffer>>> waiting = new ArrayList<>();
    for (int i = 0; i < CONCURRENCY; i++) {
      waiting.add(client.post("/sync/checkpoint-request").addQueryParam("wait", "40")
          .putHeader("Authorization", "Token " + TestKeys.token("waiter" + i))
          .sendJsonObject(new JsonObject().put("client_id", "c").put("checkpoint_request_id", "1")));
    }
    // Both waiters hold a slot until their checkpoint is stored; the next request is admitted as soon
    // as one of them has stored it, which the queue would otherwise hold for the whole wait.
    anotherRequestIsAnsweredWhileTheyWait(client, waiting, test);
  }

  @Test
  void legacyRequestsAwaitingReplicationDoNotKeepOtherCheckpointRequestsOut(Vertx vertx, VertxTestContext test) {
    WebClient client = WebClient.create(vertx, new WebClientOptions().setDefaultPort(app.running().port()));
    List<Future<HttpResponse<Buffer>>> waiting = new ArrayList<>();
    for (int i = 0; i < CONCURRENCY; i++) {
      waiting.add(client.get("/write-checkpoint.json").putHeader("Authorization", "Token " + TestKeys.token("legacy" + i)).send());
    }
    anotherRequestIsAnsweredWhileTheyWait(client, waiting, test);
  }

  /** A shutdown's grace is shorter than a long wait: the request is answered, not dropped with its connection. */
  @Test
  void aShutdownAnswersAwaitingRequestsThatTheirCheckpointIsNotAcknowledgedYet(Vertx vertx, VertxTestContext test) {
    answerWhenShutDownWhileWaiting(vertx, TestAckpoint.ADDRESSES.checkpointSubmit(), client -> client.post("/sync/checkpoint-request")
        .addQueryParam("wait", "50").putHeader("Authorization", "Token " + TestKeys.token("shutdown"))
        .sendJsonObject(new JsonObject().put("client_id", "c").put("checkpoint_request_id", "9")))
        .onComplete(test.succeeding(response -> test.verify(() -> {
          assertEquals(200, response.statusCode(), response.bodyAsString());
          JsonObject data = response.bodyAsJsonObject().getJsonObject("data");
          assertEquals("9", data.getString("checkpoint_request_id"));
          assertEquals(false, data.getBoolean("acknowledged"));
          test.completeNow();
        })));
  }

  /** A legacy wait (up to 50 s) outlasts a shutdown's grace too: it is answered 503, retry elsewhere. */
  @Test
  void aShutdownAnswersLegacyRequestsWaitingForReplication503(Vertx vertx, VertxTestContext test) {
    answerWhenShutDownWhileWaiting(vertx, TestAckpoint.ADDRESSES.headAwait(), client -> client.get("/write-checkpoint.json")
        .putHeader("Authorization", "Token " + TestKeys.token("legacy-shutdown")).send())
        .onComplete(test.succeeding(response -> test.verify(() -> {
          assertEquals(503, response.statusCode(), response.bodyAsString());
          assertEquals("ACK_UNAVAILABLE", response.bodyAsJsonObject().getJsonObject("error").getString("code"));
          test.completeNow();
        })));
  }

  /**
   * Sends {@code request} to an Ackpoint of its own, closes that Ackpoint once the request has sent
   * to {@code waitAddress} (it waits there: nothing follows replication), and answers the response.
   * Waits end near the end of the shutdown's grace (half of 2 s), not at once: see HttpVerticle.stop.
   */
  private static Future<HttpResponse<Buffer>> answerWhenShutDownWhileWaiting(
      Vertx vertx, String waitAddress, Function<WebClient, Future<HttpResponse<Buffer>>> request) {
    RunningAckpoint own = RunningAckpoint.fresh(vertx, config -> config.put("shutdown", new JsonObject().put("timeout", "2s")));
    own.sql.close();
    // Registered before the request is sent: Ackpoint may send to the address at any moment after.
    Promise<Void> waiting = Promise.promise();
    vertx.eventBus().addOutboundInterceptor(delivery -> {
      if (waitAddress.equals(delivery.message().address())) {
        waiting.tryComplete();
      }
      delivery.next();
    });
    WebClient client = WebClient.create(vertx, new WebClientOptions().setDefaultPort(own.port()));
    Future<HttpResponse<Buffer>> answer = request.apply(client);
    return waiting.future().compose(sent -> own.ackpoint.close()).compose(closed -> answer).andThen(done -> client.close());
  }

  private static void anotherRequestIsAnsweredWhileTheyWait(WebClient client, List<Future<HttpResponse<Buffer>>> waiting,
                                                            VertxTestContext test) {
    client.get("/write-checkpoint2.json").addQueryParam("client_id", "c")
        .putHeader("Authorization", "Token " + TestKeys.token("other"))
        .send()
        .onComplete(test.succeeding(response -> test.verify(() -> {
          assertEquals(200, response.statusCode(), response.bodyAsString());
          for (Future<HttpResponse<Buffer>> waiter : waiting) {
            assertFalse(waiter.isComplete(), "an awaiting request ended before the other request was answered");
          }
          client.close();
          test.completeNow();
        })));
  }
}
