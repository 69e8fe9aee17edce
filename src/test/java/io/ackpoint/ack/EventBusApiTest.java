package io.ackpoint.ack;

import io.ackpoint.Ackpoint;
import io.ackpoint.EventBusAddresses;
import io.ackpoint.support.Await;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SPEC section 7: another verticle requests a checkpoint over the event bus and hears when it is reached. */
@ExtendWith(VertxExtension.class)
class EventBusApiTest {

  /** The README's example, as a verticle of the application. */
  static final class OrderService extends VerticleBase {
    final Promise<JsonObject> created = Promise.promise();
    final Promise<JsonObject> reached = Promise.promise();

    @Override
    public Future<?> start() {
      vertx.eventBus().<JsonObject>consumer(EventBusAddresses.CHECKPOINT_REACHED, msg -> {
        if ("shop-42".equals(msg.body().getString("user_id")) && "tablet".equals(msg.body().getString("client_id"))) {
          reached.tryComplete(msg.body());
        }
      });
      JsonObject request = new JsonObject().put("user_id", "shop-42").put("client_id", "tablet").put("checkpoint_request_id", "11");
      vertx.eventBus().<JsonObject>request(EventBusAddresses.CHECKPOINT_CREATE, request)
          .onSuccess(reply -> created.complete(reply.body()))
          .onFailure(created::fail);
      return Future.succeededFuture();
    }
  }

  @Test
  void anotherVerticleCreatesACheckpointAndHearsItReached(Vertx vertx, VertxTestContext test) {
    JsonObject config = TestAckpoint.withFollower(TestAckpoint.configJson(TestDatabase.freshDatabase()));
    Ackpoint ackpoint = Await.result(Ackpoint.start(vertx, TestAckpoint.config(config)));
    OrderService service = new OrderService();
    vertx.deployVerticle(service)
        .compose(id -> Future.all(service.created.future(), service.reached.future()))
        .onComplete(test.succeeding(both -> test.verify(() -> {
          JsonObject created = service.created.future().result();
          JsonObject reached = service.reached.future().result();
          assertEquals("11", created.getString("write_checkpoint"));
          assertTrue(created.getString("replication_head").matches("[0-9A-F]{8}/[0-9A-F]{8}"));
          assertEquals("11", reached.getString("write_checkpoint"));
          assertTrue(reached.getString("position").compareTo(created.getString("replication_head")) >= 0);
          assertTrue(reached.getString("checkpoint").matches("\\d+"));
          ackpoint.close().onComplete(test.succeedingThenComplete());
        })));
  }

  @Test
  void anInvalidRequestFailsWithTheHttpStatusAsCode(Vertx vertx, VertxTestContext test) {
    JsonObject config = TestAckpoint.configJson(TestDatabase.freshDatabase());
    Ackpoint ackpoint = Await.result(Ackpoint.start(vertx, TestAckpoint.config(config)));
    vertx.eventBus().request(EventBusAddresses.CHECKPOINT_CREATE, new JsonObject().put("user_id", "x").put("checkpoint_request_id", "0"))
        .onComplete(test.failing(e -> test.verify(() -> {
          ReplyException reply = (ReplyException) e;
          assertEquals(400, reply.failureCode());
          assertEquals("ACK_INVALID_CHECKPOINT_REQUEST_ID", new JsonObject(reply.getMessage()).getString("code"));
          ackpoint.close().onComplete(test.succeedingThenComplete());
        })));
  }

  @Test
  void aRequestWhoseBodyIsNotAJsonObjectIsRefusedWith400(Vertx vertx, VertxTestContext test) {
    JsonObject config = TestAckpoint.configJson(TestDatabase.freshDatabase());
    Ackpoint ackpoint = Await.result(Ackpoint.start(vertx, TestAckpoint.config(config)));
    vertx.eventBus().request(EventBusAddresses.CHECKPOINT_CREATE, "shop-42")
        .onComplete(test.failing(e -> test.verify(() -> {
          assertEquals(400, ((ReplyException) e).failureCode());
          ackpoint.close().onComplete(test.succeedingThenComplete());
        })));
  }

  @Test
  void aUserIdThatStorageCannotHoldIsRefusedWith400(Vertx vertx, VertxTestContext test) {
    JsonObject config = TestAckpoint.configJson(TestDatabase.freshDatabase());
    Ackpoint ackpoint = Await.result(Ackpoint.start(vertx, TestAckpoint.config(config)));
    vertx.eventBus().request(EventBusAddresses.CHECKPOINT_CREATE, new JsonObject().put("user_id", "nul\u0000byte"))
        .onComplete(test.failing(e -> test.verify(() -> {
          assertEquals(400, ((ReplyException) e).failureCode());
          assertEquals("ACK_INVALID_USER_ID", new JsonObject(e.getMessage()).getString("code"));
          ackpoint.close().onComplete(test.succeedingThenComplete());
        })));
  }
}
