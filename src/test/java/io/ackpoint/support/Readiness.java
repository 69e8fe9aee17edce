package io.ackpoint.support;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;

import java.util.function.Predicate;

/** {@code GET /probes/readiness} of a running Ackpoint, over real HTTP. */
public final class Readiness {

  private static final int MAX_POLLS = 300;
  private static final long POLL_INTERVAL_MS = 100;

  private Readiness() {
  }

  /** The {@code data} of one readiness answer; checks that the status code agrees with {@code ready}. */
  public static JsonObject probe(RunningAckpoint app) {
    HttpResponse<Buffer> response = ApiClient.send(app.api.request(HttpMethod.GET, "/probes/readiness"), null);
    JsonObject data = ApiClient.data(response);
    int expected = data.getBoolean("ready") ? 200 : 503;
    if (response.statusCode() != expected) {
      throw new AssertionError("readiness answered " + response.statusCode() + " with " + response.bodyAsString());
    }
    return data;
  }

  /**
   * Polls readiness until its {@code data} matches (for state changes that depend on time, such as
   * a progress timeout): a bounded number of awaited requests, a short timer between them.
   */
  public static JsonObject await(Vertx vertx, RunningAckpoint app, Predicate<JsonObject> until) {
    JsonObject last = null;
    for (int poll = 0; poll < MAX_POLLS; poll++) {
      last = probe(app);
      if (until.test(last)) {
        return last;
      }
      Await.result(vertx.timer(POLL_INTERVAL_MS));
    }
    throw new AssertionError("readiness never matched within " + MAX_POLLS + " polls; last answer: " + last);
  }
}
