package io.ackpoint.bench;

import io.ackpoint.support.ApiClient;
import io.ackpoint.support.StreamClient;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.Arrays;

/**
 * Acknowledgement latency: from the moment the checkpoint-request response arrives to the moment the
 * matching stream line arrives (zero when the line came first), one request at a time.
 */
final class AckLatency {

  record Result(int samples, double p50ms, double p99ms, double maxMs) {
  }

  private AckLatency() {
  }

  static Result measure(Vertx vertx, int port, String token, String clientId, int samples) {
    return measure(vertx, port, port, token, clientId, samples, Long.MAX_VALUE);
  }

  /** Requests sent to {@code requestPort}, their acknowledgement read on a stream of {@code streamPort} (another node). */
  static Result measure(Vertx vertx, int requestPort, int streamPort, String token, String clientId, int samples) {
    return measure(vertx, requestPort, streamPort, token, clientId, samples, Long.MAX_VALUE);
  }

  /**
   * As many samples as fit before {@code deadline} ({@link System#nanoTime()}), at most {@code samples}:
   * a measurement taken while a load of known length runs, so that every sample is one under load.
   */
  static Result measureUntil(Vertx vertx, int port, String token, String clientId, int samples, long deadline) {
    return measure(vertx, port, port, token, clientId, samples, deadline);
  }

  private static Result measure(Vertx vertx, int requestPort, int streamPort, String token, String clientId, int samples, long deadline) {
    ApiClient api = new ApiClient(vertx, requestPort);
    long[] latencies = new long[samples];
    int taken = 0;
    try (StreamClient stream = StreamClient.syncStream(vertx, streamPort, token, clientId)) {
      stream.next();
      stream.next();
      for (; taken < samples && System.nanoTime() < deadline; taken++) {
        String id = Long.toString(System.currentTimeMillis() * 1000 + taken);
        api.checkpointRequest(token, clientId, id);
        long answered = System.nanoTime();
        StreamClient.TimedLine line;
        do {
          line = stream.nextTimed();
        } while (!acknowledges(line.json(), id));
        latencies[taken] = Math.max(0, line.arrivedNanos() - answered);
      }
    } finally {
      api.close();
    }
    if (taken == 0) {
      throw new IllegalStateException("no acknowledgement latency sample fitted before the deadline");
    }
    long[] sorted = Arrays.copyOf(latencies, taken);
    Arrays.sort(sorted);
    return new Result(taken, sorted[taken / 2] / 1e6, sorted[(int) Math.min(taken - 1, Math.ceil(taken * 0.99) - 1)] / 1e6,
        sorted[taken - 1] / 1e6);
  }

  private static boolean acknowledges(JsonObject line, String id) {
    JsonObject diff = line.getJsonObject("checkpoint_diff");
    return diff != null && id.equals(diff.getString("write_checkpoint"));
  }
}
