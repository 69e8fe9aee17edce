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
    return measure(vertx, port, port, token, clientId, samples);
  }

  /** Requests sent to {@code requestPort}, their acknowledgement read on a stream of {@code streamPort} (another node). */
  static Result measure(Vertx vertx, int requestPort, int streamPort, String token, String clientId, int samples) {
    ApiClient api = new ApiClient(vertx, requestPort);
    long[] latencies = new long[samples];
    try (StreamClient stream = StreamClient.syncStream(vertx, streamPort, token, clientId)) {
      stream.next();
      stream.next();
      for (int i = 0; i < samples; i++) {
        String id = Long.toString(System.currentTimeMillis() * 1000 + i);
        api.checkpointRequest(token, clientId, id);
        long answered = System.nanoTime();
        StreamClient.TimedLine line;
        do {
          line = stream.nextTimed();
        } while (!acknowledges(line.json(), id));
        latencies[i] = Math.max(0, line.arrivedNanos() - answered);
      }
    } finally {
      api.close();
    }
    Arrays.sort(latencies);
    return new Result(samples, latencies[samples / 2] / 1e6, latencies[(int) Math.min(samples - 1, Math.ceil(samples * 0.99) - 1)] / 1e6,
        latencies[samples - 1] / 1e6);
  }

  private static boolean acknowledges(JsonObject line, String id) {
    JsonObject diff = line.getJsonObject("checkpoint_diff");
    return diff != null && id.equals(diff.getString("write_checkpoint"));
  }
}
