package io.ackpoint.compaction;

import io.ackpoint.support.ApiClient;
import io.ackpoint.support.RunningAckpoint;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;

@ExtendWith(VertxExtension.class)
class AdminDisabledTest {

  @Test
  void withoutAnAdminTokenTheAdminRoutesAreForbidden(Vertx vertx) {
    try (RunningAckpoint app = RunningAckpoint.fresh(vertx, config -> config)) {
      var response = ApiClient.send(app.api.request(HttpMethod.POST, "/admin/compact")
          .putHeader("Authorization", "Bearer anything"), null);
      assertEquals(403, response.statusCode());
      assertEquals("ACK_ADMIN_DISABLED", ApiClient.errorCode(response));
    }
  }
}
