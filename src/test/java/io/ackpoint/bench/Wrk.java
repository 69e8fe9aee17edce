package io.ackpoint.bench;

import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

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
    return run(port, method, path, tokens, connections, seconds, 0, 1);
  }

  /**
   * The same load on every port at once, {@code connections} each: one wrk process per port, each
   * with id sequences of its own (scripts/bench.lua), so that no two send one user the same id.
   * Answers once every run has ended, the results in the order of the ports.
   */
  static List<Result> runAll(List<Integer> ports, String method, String path, Path tokens, int connections, int seconds) {
    List<CompletableFuture<Result>> runs = new ArrayList<>();
    for (int i = 0; i < ports.size(); i++) {
      int process = i;
      CompletableFuture<Result> run = new CompletableFuture<>();
      Thread thread = new Thread(() -> {
        try {
          run.complete(run(ports.get(process), method, path, tokens, connections, seconds, process, ports.size()));
        } catch (Throwable e) {
          run.completeExceptionally(e);
        }
      }, "wrk-" + i);
      thread.setDaemon(true);
      thread.start();
      runs.add(run);
    }
    // Every run ends by itself within its seconds: wait for all before a failure is thrown.
    CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new)).handle((done, failure) -> done).join();
    return runs.stream().map(CompletableFuture::join).toList();
  }

  private static Result run(int port, String method, String path, Path tokens, int connections, int seconds,
                            int process, int processes) throws IOException, InterruptedException {
    int threads = 2;
    ProcessBuilder builder = new ProcessBuilder("wrk", "-t" + threads, "-c" + Math.max(connections, threads),
        "-d" + seconds + "s", "--timeout", "10s", "-s", "scripts/bench.lua", "http://127.0.0.1:" + port + path)
        .redirectErrorStream(true);
    builder.environment().put("BENCH_PATH", path);
    builder.environment().put("BENCH_METHOD", method);
    builder.environment().put("BENCH_TOKENS", tokens.toString());
    builder.environment().put("BENCH_THREADS", Integer.toString(threads));
    builder.environment().put("BENCH_PROCESS", Integer.toString(process));
    builder.environment().put("BENCH_PROCESSES", Integer.toString(processes));
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
