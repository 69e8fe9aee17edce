package io.ackpoint.embedding;

import io.ackpoint.Ackpoint;
import io.ackpoint.AckpointOptions;
import io.ackpoint.support.TestAckpoint;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

/**
 * An application, run as a process of its own, that deploys Ackpoint on its embedded PostgreSQL in
 * the data directory {@code args[0]} and never closes it: it says so on its output, then waits for
 * a signal to end it.
 */
public final class ExitingHost {

  private ExitingHost() {
  }

  public static void main(String[] args) throws Exception {
    JsonObject config = TestAckpoint.configJson("")
        .put("source", new JsonObject().put("type", "embedded"))
        .put("storage", new JsonObject().put("type", "embedded"))
        .put("embedded", new JsonObject().put("data_dir", args[0]).put("port", TestAckpoint.freePort()));
    Ackpoint.deploy(Vertx.vertx(), new AckpointOptions(config).setHttpEnabled(false)).await();
    System.out.println("deployed");
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}
