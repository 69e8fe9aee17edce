package io.ackpoint.bench;

import io.ackpoint.support.JvmOptions;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * An Ackpoint started as its own process from target/ackpoint.jar, so that its CPU can be read apart,
 * with the JVM options it ships with ({@code conf/jvm.options}, as {@code scripts/run} and the image).
 */
final class ServerProcess implements AutoCloseable {

  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private final Process process;
  final int port;
  final Path log;

  private ServerProcess(Process process, int port, Path log) {
    this.process = process;
    this.port = port;
    this.log = log;
  }

  static ServerProcess start(String name, int port, Map<String, String> env) throws IOException, InterruptedException {
    return start(name, port, env, Path.of("target/ackpoint.jar"));
  }

  /** {@code jar}: another build of Ackpoint, for before/after comparisons. */
  static ServerProcess start(String name, int port, Map<String, String> env, Path jar) throws IOException, InterruptedException {
    Path log = Files.createTempFile("ackpoint-bench-" + name, ".log");
    List<String> command = new ArrayList<>(List.of("java"));
    command.addAll(JvmOptions.shipped());
    command.addAll(List.of("-jar", jar.toString()));
    ProcessBuilder builder = new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(log.toFile());
    builder.environment().putAll(env);
    builder.environment().put("ACKPOINT_HTTP_PORT", Integer.toString(port));
    ServerProcess server = new ServerProcess(builder.start(), port, log);
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    while (System.nanoTime() < deadline) {
      if (!server.process.isAlive()) {
        throw new IllegalStateException("Ackpoint exited at start: " + Files.readString(log));
      }
      try {
        if (server.get("/probes/readiness").statusCode() == 200) {
          return server;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      Thread.sleep(200); // polling a separate process at start-up: there is nothing to await
    }
    server.close();
    throw new IllegalStateException("Ackpoint did not become ready: " + Files.readString(log));
  }

  long pid() {
    return process.pid();
  }

  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** {@code GET} with an admin token ({@code /admin/status}). */
  HttpResponse<String> get(String path, String bearer) throws IOException, InterruptedException {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header("Authorization", "Bearer " + bearer).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** SIGKILL: nothing of Ackpoint runs after it. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  HttpResponse<String> post(String path, String bearer) throws IOException, InterruptedException {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .header("Authorization", "Bearer " + bearer)
            .timeout(Duration.ofMinutes(10))
            .POST(HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** A metric's value summed over the series whose line starts with {@code prefix}. */
  double metric(String prefix) throws IOException, InterruptedException {
    double sum = 0;
    for (String line : get("/metrics").body().split("\n")) {
      if (line.startsWith(prefix)) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }

  /** Heap in use after a full collection, from jcmd: what live objects really take. */
  long liveHeapBytes() throws IOException, InterruptedException {
    run("jcmd", Long.toString(pid()), "GC.run");
    String info = run("jcmd", Long.toString(pid()), "GC.heap_info");
    long used = 0;
    for (String line : info.split("\n")) {
      line = line.trim();
      int at = line.indexOf(" used ");
      if ((line.startsWith("PSYoungGen") || line.startsWith("ParOldGen")) && at > 0) {
        String number = line.substring(at + 6).trim().split("K")[0];
        used += Long.parseLong(number) * 1024;
      }
    }
    return used;
  }

  static String run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor();
    return out;
  }

  @Override
  public void close() {
    process.destroy();
    try {
      process.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
