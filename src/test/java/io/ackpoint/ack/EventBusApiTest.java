package io.ackpoint.ack;

import io.ackpoint.Ackpoint;
import io.ackpoint.AckpointAddresses;
import io.ackpoint.AckpointException;
import io.ackpoint.AckpointOptions;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.Checkpoint;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SPEC section 7: other verticles of the application request checkpoints over the event bus and hear
 * when they are reached. Ackpoint runs in the test's own Vert.x, with no HTTP port.
 */
@ExtendWith(VertxExtension.class)
class EventBusApiTest {

  /** The README's example, as a verticle of the application. */
  static final class OrderService extends VerticleBase {
    final Promise<JsonObject> created = Promise.promise();
    final Promise<JsonObject> reached = Promise.promise();

    @Override
    public Future<?> start() {
      vertx.eventBus().<JsonObject>consumer("ackpoint.checkpoint.reached", msg -> {
        if ("shop-42".equals(msg.body().getString("user_id")) && "tablet".equals(msg.body().getString("client_id"))) {
          reached.tryComplete(msg.body());
        }
      });
      JsonObject request = new JsonObject().put("user_id", "shop-42").put("client_id", "tablet").put("checkpoint_request_id", "11");
      vertx.eventBus().<JsonObject>request("ackpoint.checkpoint.create", request)
          .onSuccess(reply -> created.complete(reply.body()))
          .onFailure(created::fail);
      return Future.succeededFuture();
    }
  }

  /** An Ackpoint without HTTP on a fresh database, changed by {@code customize}. */
  private static Future<Ackpoint> busOnly(Vertx vertx, UnaryOperator<JsonObject> customize) {
    JsonObject config = customize.apply(TestAckpoint.configJson(TestDatabase.freshDatabase()));
    config.getJsonObject("http").put("enabled", false);
    return Ackpoint.deploy(vertx, new AckpointOptions(config));
  }

  @Test
  void anotherVerticleCreatesACheckpointAndHearsItReached(Vertx vertx, VertxTestContext test) {
    OrderService service = new OrderService();
    busOnly(vertx, TestAckpoint::withFollower).onComplete(test.succeeding(ackpoint -> vertx.deployVerticle(service)
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
        })))));
  }

  @Test
  void aFailureCrossesTheBusAsATypedErrorWithTheHttpStatusAsCode(Vertx vertx, VertxTestContext test) {
    Checkpoint refused = test.checkpoint(3);
    busOnly(vertx, c -> c).onComplete(test.succeeding(ackpoint -> {
      String create = ackpoint.addresses().checkpointCreate();
      Future<Message<Object>> invalidId = vertx.eventBus().request(create, new JsonObject().put("user_id", "x").put("checkpoint_request_id", "0"));
      Future<Message<Object>> notJson = vertx.eventBus().request(create, "shop-42");
      Future<Message<Object>> nulInUser = vertx.eventBus().request(create, new JsonObject().put("user_id", "nul\u0000byte"));
      invalidId.onComplete(test.failing(e -> test.verify(() -> {
        assertEquals(400, ((ReplyException) e).failureCode());
        assertEquals("ACK_INVALID_CHECKPOINT_REQUEST_ID", ((AckpointException) e).code());
        refused.flag();
      })));
      notJson.onComplete(test.failing(e -> test.verify(() -> {
        assertEquals("ACK_INVALID_JSON", ((AckpointException) e).code());
        refused.flag();
      })));
      nulInUser.onComplete(test.failing(e -> test.verify(() -> {
        assertEquals("ACK_INVALID_USER_ID", ((AckpointException) e).code());
        refused.flag();
      })));
      Future.join(invalidId, notJson, nulInUser).onComplete(done -> ackpoint.close());
    }));
  }

  @Test
  void aNullCheckpointRequestIdAsksForAGeneratedCheckpointAsAnAbsentOneDoes(Vertx vertx, VertxTestContext test) {
    busOnly(vertx, c -> c).onComplete(test.succeeding(ackpoint -> {
      String create = ackpoint.addresses().checkpointCreate();
      vertx.eventBus().<JsonObject>request(create, new JsonObject().put("user_id", "u").putNull("checkpoint_request_id"))
          .compose(first -> vertx.eventBus().<JsonObject>request(create, new JsonObject().put("user_id", "u"))
              .map(second -> List.of(first.body().getString("write_checkpoint"), second.body().getString("write_checkpoint"))))
          .onComplete(test.succeeding(ids -> test.verify(() -> {
            assertEquals(List.of("1", "2"), ids);
            ackpoint.close().onComplete(test.succeedingThenComplete());
          })));
    }));
  }

  @Test
  void twoAckpointsWithTheirOwnPrefixesShareOneVertx(Vertx vertx, VertxTestContext test) {
    AckpointAddresses first = new AckpointAddresses("shop-a");
    AckpointAddresses second = new AckpointAddresses("shop-b");
    JsonObject user = new JsonObject().put("user_id", "u").put("client_id", "c");
    Future.all(
            busOnly(vertx, c -> c.put("eventbus", new JsonObject().put("prefix", first.prefix()))),
            busOnly(vertx, c -> c.put("eventbus", new JsonObject().put("prefix", second.prefix()))))
        .onComplete(test.succeeding(both -> {
          Ackpoint a = both.resultAt(0);
          Ackpoint b = both.resultAt(1);
          vertx.eventBus().<JsonObject>request(first.checkpointCreate(), user)
              .compose(one -> vertx.eventBus().<JsonObject>request(first.checkpointCreate(), user))
              .compose(two -> vertx.eventBus().<JsonObject>request(second.checkpointCreate(), user).map(other -> {
                test.verify(() -> {
                  assertEquals("2", two.body().getString("write_checkpoint"), "the first Ackpoint counts its own");
                  assertEquals("1", other.body().getString("write_checkpoint"), "the second has a counter of its own");
                  assertEquals(first, a.addresses());
                  assertEquals(second, b.addresses());
                });
                return other;
              }))
              .compose(v -> Future.all(a.close(), b.close()))
              .onComplete(test.succeedingThenComplete());
        }));
  }
}
