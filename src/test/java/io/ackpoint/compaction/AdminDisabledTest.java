package io.ackpoint.compaction;

import io.ackpoint.Ackpoint;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;

@ExtendWith(VertxExtension.class)
class AdminDisabledTest {

  @Test
  void withoutAnAdminTokenTheAdminRoutesAreForbidden(Vertx vertx) {
    JsonObject config = TestAckpoint.configJson(TestDatabase.freshDatabase());
    Ackpoint ackpoint = Await.result(Ackpoint.start(vertx, TestAckpoint.config(config)));
    try {
      var response = ApiClient.send(new ApiClient(vertx, TestAckpoint.portOf(config))
          .request(HttpMethod.POST, "/admin/compact").putHeader("Authorization", "Bearer anything"), null);
      assertEquals(403, response.statusCode());
      assertEquals("ACK_ADMIN_DISABLED", ApiClient.errorCode(response));
    } finally {
      Await.result(ackpoint.close());
    }
  }
}
