package io.ackpoint.promise;

import io.ackpoint.support.Await;
import io.ackpoint.support.AckpointExtension;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;

import static io.ackpoint.support.ApiClient.data;
import static io.ackpoint.support.ApiClient.errorCode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Requests sent together share a batch. Whatever else is in it, a generated checkpoint is a new id,
 * and one user's state can only fail that user's request.
 */
@ExtendWith(VertxExtension.class)
class OneUserOneOutcomeTest {

  @RegisterExtension
  final AckpointExtension app = AckpointExtension.with(config -> config);

  private WebClient client;

  @BeforeEach
  void start() {
    client = WebClient.create(app.vertx(), new WebClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(app.port()),
        new PoolOptions().setHttp1MaxSize(64));
  }

  @AfterEach
  void stop() {
    client.close();
  }

  private Future<HttpResponse<Buffer>> generated(String token, String clientId) {
    return client.get("/write-checkpoint2.json").addQueryParam("client_id", clientId)
        .putHeader("Authorization", "Token " + token).send();
  }

  private Future<HttpResponse<Buffer>> supplied(String token, String clientId, String id) {
    return client.post("/sync/checkpoint-request").putHeader("Authorization", "Token " + token)
        .putHeader("content-type", "application/json")
        .sendJsonObject(new JsonObject().put("client_id", clientId).put("checkpoint_request_id", id));
  }

  @Test
  void aGeneratedCheckpointSentWithAStaleRequestIsStillANewId() {
    String token = TestKeys.token("mixer");
    for (int round = 0; round < 5; round++) {
      long before = Long.parseLong(data(app.api().writeCheckpoint2(token, "c")).getString("write_checkpoint"));
      // Sent together, so that they share a batch: a stale supplied id and a generated one.
      Future<HttpResponse<Buffer>> stale = supplied(token, "c", "1");
      Future<HttpResponse<Buffer>> fresh = generated(token, "c");
      Await.result(Future.all(stale, fresh));
      long generatedId = Long.parseLong(data(fresh.result()).getString("write_checkpoint"));
      assertTrue(generatedId > before, "round " + round + ": generated " + generatedId + " after " + before);
      long suppliedAnswer = Long.parseLong(data(stale.result()).getString("checkpoint_request_id"));
      assertTrue(suppliedAnswer >= 1);
    }
  }

  @Test
  void anExhaustedUserFailsAloneWith409AndOthersInItsBatchSucceed() {
    String exhausted = TestKeys.token("exhausted");
    assertEquals("9223372036854775807",
        data(app.api().checkpointRequest(exhausted, "c", "9223372036854775807")).getString("checkpoint_request_id"));
    for (int round = 0; round < 3; round++) {
      List<Future<HttpResponse<Buffer>>> others = new ArrayList<>();
      Future<HttpResponse<Buffer>> overflow = generated(exhausted, "c");
      for (int i = 0; i < 20; i++) {
        others.add(generated(TestKeys.token("bystander-" + i), "c"));
      }
      Await.result(Future.join(new ArrayList<>(others) {{ add(overflow); }}));
      assertEquals(409, overflow.result().statusCode(), overflow.result().bodyAsString());
      assertEquals("ACK_CHECKPOINT_EXHAUSTED", errorCode(overflow.result()));
      for (Future<HttpResponse<Buffer>> other : others) {
        assertEquals(200, other.result().statusCode(), other.result().bodyAsString());
      }
    }
    assertEquals(9223372036854775807L, app.sql().count(
        "SELECT write_checkpoint FROM ackpoint_write_checkpoints WHERE user_id = 'exhausted'"), "nothing changed");
    // A supplied id for the exhausted user still answers what storage holds.
    assertEquals("9223372036854775807",
        data(app.api().checkpointRequest(exhausted, "c", "5")).getString("checkpoint_request_id"));
  }

  @Test
  void theAnswersOfConcurrentRequestsOfOneUserAreConsistentWithSomeSerialOrder() {
    String token = TestKeys.token("storm");
    List<Future<HttpResponse<Buffer>>> generatedAnswers = new ArrayList<>();
    List<Future<HttpResponse<Buffer>>> all = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      Future<HttpResponse<Buffer>> g = generated(token, "c");
      generatedAnswers.add(g);
      all.add(g);
      all.add(supplied(token, "c", Integer.toString(1 + i % 7)));
    }
    Await.result(Future.all(all));
    java.util.Set<Long> ids = new java.util.HashSet<>();
    long max = 0;
    for (Future<HttpResponse<Buffer>> g : generatedAnswers) {
      assertEquals(200, g.result().statusCode());
      long id = Long.parseLong(data(g.result()).getString("write_checkpoint"));
      max = Math.max(max, id);
      ids.add(id);
    }
    long stored = app.sql().count("SELECT write_checkpoint FROM ackpoint_write_checkpoints WHERE user_id = 'storm'");
    assertTrue(stored >= max, "the row holds at least every generated answer");
    assertTrue(ids.size() >= 1);
  }
}
