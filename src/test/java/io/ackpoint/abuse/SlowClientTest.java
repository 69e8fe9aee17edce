package io.ackpoint.abuse;

import io.ackpoint.support.Await;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import static io.ackpoint.support.ApiClient.data;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Clients that send half a request and stall hold a socket each, nothing more: everyone else is served. */
@ExtendWith(VertxExtension.class)
class SlowClientTest {

  @Test
  void stalledHalfRequestsDoNotHoldUpOtherClients(Vertx vertx) {
    try (RunningAckpoint app = RunningAckpoint.fresh(vertx, c -> c)) {
      String token = TestKeys.token(vertx, "patient");
      NetClient raw = vertx.createNetClient();
      List<Future<NetSocket>> stalled = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        String partial = i % 2 == 0
            ? "POST /sync/checkpoint-request HTTP/1.1\r\nHost: x\r\nAuthorization: Token " + token
                + "\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n{\"client_id\":\"slow\",\"check"
            : "GET /write-checkpoint2.json?client_id=slow HTTP/1.1\r\nHost: x\r\nAuthoriz";
        stalled.add(raw.connect(app.port(), "127.0.0.1").compose(socket -> socket.write(partial).map(socket)));
      }
      Await.result(Future.all(stalled));

      assertEquals("1", data(app.api.writeCheckpoint2(token, "prompt")).getString("write_checkpoint"));
      assertEquals(1, app.sql.checkpointRows(), "nothing of the stalled requests was stored");
      Await.result(raw.close());
    }
  }
}
