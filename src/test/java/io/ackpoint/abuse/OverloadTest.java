package io.ackpoint.abuse;

import io.ackpoint.Ackpoint;
import io.ackpoint.support.Await;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A burst far beyond the queue limits: the excess gets 429 with Retry-After, and service is normal right after. */
@ExtendWith(VertxExtension.class)
class OverloadTest {

  @Test
  void aBurstBeyondTheQueueIsRefusedWith429AndServiceRecoversAtOnce(Vertx vertx) {
    String db = TestDatabase.freshDatabase();
    JsonObject config = TestAckpoint.configJson(db);
    config.getJsonObject("http").put("queues", new JsonObject()
        .put("checkpointing", new JsonObject().put("concurrency", 4).put("max_queue_depth", 8)));
    Ackpoint ackpoint = Await.result(TestAckpoint.start(vertx, config));
    WebClient client = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
        .setDefaultPort(TestAckpoint.portOf(config)), new PoolOptions().setHttp1MaxSize(100));
    String token = TestKeys.token(vertx, "burst");
    try (Sql sql = new Sql(vertx, db)) {
      // Storage stalls: the running requests hold their slots until the lock goes.
      SqlConnection blocker = Await.result(sql.pool().getConnection());
      Transaction tx = Await.result(blocker.begin());
      Await.result(blocker.query("LOCK TABLE ackpoint_write_checkpoints IN ACCESS EXCLUSIVE MODE").execute());

      List<Future<HttpResponse<Buffer>>> burst = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        burst.add(client.get("/write-checkpoint2.json").addQueryParam("client_id", "c" + i)
            .putHeader("Authorization", "Token " + token).send());
      }
      // The 48 requests beyond 4 running + 8 waiting are answered while storage is still stalled.
      awaitRefusals(burst, 48);
      Await.result(tx.rollback());
      blocker.close();

      Await.result(Future.join(burst));
      long ok = burst.stream().filter(f -> f.result().statusCode() == 200).count();
      long tooMany = burst.stream().filter(f -> f.result().statusCode() == 429).count();
      assertEquals(12, ok);
      assertEquals(48, tooMany);
      burst.stream().filter(f -> f.result().statusCode() == 429).forEach(f -> {
        assertEquals("1", f.result().getHeader("Retry-After"));
        assertEquals("ACK_TOO_MANY_REQUESTS", f.result().bodyAsJsonObject().getJsonObject("error").getString("code"));
      });
      assertEquals(200, Await.result(client.get("/write-checkpoint2.json").addQueryParam("client_id", "after")
          .putHeader("Authorization", "Token " + token).send()).statusCode());
      assertEquals(13, sql.checkpointRows());
    } finally {
      client.close();
      Await.result(ackpoint.close());
    }
  }

  /** Awaits the first {@code count} responses, which can only be refusals while storage is locked. */
  private static void awaitRefusals(List<Future<HttpResponse<Buffer>>> burst, int count) {
    io.vertx.core.Promise<Void> enough = io.vertx.core.Promise.promise();
    java.util.concurrent.atomic.AtomicInteger answered = new java.util.concurrent.atomic.AtomicInteger();
    burst.forEach(f -> f.onComplete(ar -> {
      if (answered.incrementAndGet() == count) {
        enough.tryComplete();
      }
    }));
    Await.result(enough.future());
  }
}
