package io.ackpoint.bench;

import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/** One wrk run on loopback, parsed from the BENCH line of scripts/bench.lua. */
final class Wrk {

  record Result(long requests, double seconds, long p50us, long p99us, long maxUs, Map<Integer, Long> statuses, long socketErrors) {

    long ok() {
      return statuses.entrySet().stream().filter(e -> e.getKey() / 100 == 2).mapToLong(Map.Entry::getValue).sum();
    }

    double okPerSecond() {
      return ok() / seconds;
    }

    String non2xx() {
      StringBuilder b = new StringBuilder();
      statuses.forEach((status, count) -> {
        if (status / 100 != 2) {
          b.append(b.length() == 0 ? "" : " ").append(status).append(':').append(count);
        }
      });
      if (socketErrors > 0) {
        b.append(b.length() == 0 ? "" : " ").append("socket:").append(socketErrors);
      }
      return b.length() == 0 ? "0" : b.toString();
    }
  }

  private Wrk() {
  }

  static Result run(int port, String method, String path, Path tokens, int connections, int seconds)
      throws IOException, InterruptedException {
    int threads = 2;
    ProcessBuilder builder = new ProcessBuilder("wrk", "-t" + threads, "-c" + Math.max(connections, threads),
        "-d" + seconds + "s", "--timeout", "10s", "-s", "scripts/bench.lua", "http://127.0.0.1:" + port + path)
        .redirectErrorStream(true);
    builder.environment().put("BENCH_PATH", path);
    builder.environment().put("BENCH_METHOD", method);
    builder.environment().put("BENCH_TOKENS", tokens.toString());
    builder.environment().put("BENCH_THREADS", Integer.toString(threads));
    Process p = builder.start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor();
    String line = out.lines().filter(l -> l.startsWith("BENCH ")).findFirst()
        .orElseThrow(() -> new IllegalStateException("wrk printed no result: " + out));
    JsonObject json = new JsonObject(line.substring("BENCH ".length()));
    Map<Integer, Long> statuses = new TreeMap<>();
    json.getJsonObject("statuses").forEach(e -> statuses.put(Integer.parseInt(e.getKey()), ((Number) e.getValue()).longValue()));
    long socketErrors = json.getLong("connect_errors") + json.getLong("read_errors") + json.getLong("write_errors")
        + json.getLong("timeouts");
    return new Result(json.getLong("requests"), json.getLong("duration_us") / 1e6, json.getLong("p50_us"),
        json.getLong("p99_us"), json.getLong("max_us"), statuses, socketErrors);
  }
}
