package io.ackpoint.support;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Ackpoint as a process of its own ({@code io.ackpoint.Main} on this test run's class path), for
 * what only a process can show: how it starts, how it dies, what its next start finds.
 */
public final class AckpointProcess implements AutoCloseable {

  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private final Process process;
  private final String host;
  private final int port;
  private final Path log;

  private AckpointProcess(Process process, String host, int port, Path log) {
    this.process = process;
    this.host = host;
    this.port = port;
    this.log = log;
  }

  /**
   * The environment of a process with source and storage on the PostgreSQL database at
   * {@code databaseUri}, the replication slot {@code slot} and a free API port: a mutable map.
   */
  public static Map<String, String> environmentOn(String databaseUri, String slot) {
    Map<String, String> env = onPostgres(databaseUri);
    env.put("ACKPOINT_HTTP_PORT", Integer.toString(TestAckpoint.freePort()));
    env.put("ACKPOINT_REPLICATION_SLOT_NAME", slot);
    return env;
  }

  /** The environment of an Ackpoint with source and storage on the PostgreSQL database at {@code uri}; a mutable map. */
  public static Map<String, String> onPostgres(String uri) {
    Map<String, String> env = new HashMap<>();
    env.put("ACKPOINT_CONFIG", "conf/ackpoint.yaml");
    env.put("ACKPOINT_SOURCE_TYPE", "postgresql");
    env.put("ACKPOINT_SOURCE_URI", uri);
    env.put("ACKPOINT_STORAGE_TYPE", "postgresql");
    env.put("ACKPOINT_STORAGE_URI", uri);
    return env;
  }

  /**
   * Starts Main with {@code env} (on top of this process's) and waits until it is ready; one that
   * never is is stopped (the caller has nothing to close: a node left running outlived its test run).
   */
  public static AckpointProcess startReady(Map<String, String> env) throws IOException, InterruptedException {
    AckpointProcess started = start(env);
    try {
      started.awaitReady(Duration.ofSeconds(120));
    } catch (IOException | InterruptedException | RuntimeException | Error notReady) {
      started.close();
      throw notReady;
    }
    return started;
  }

  public static AckpointProcess start(Map<String, String> env) throws IOException {
    return start(env, List.of(), "127.0.0.1");
  }

  /**
   * Starts Main with {@code env}, its command line after {@code prefix} (such as {@code ip netns exec
   * NAME}, which execs it: the process is Main's JVM itself), reached at {@code host}.
   */
  public static AckpointProcess start(Map<String, String> env, List<String> prefix, String host) throws IOException {
    return start(env, prefix, host, List.of());
  }

  /** {@link #start(Map, List, String)} with {@code arguments} on Main's command line. */
  public static AckpointProcess start(Map<String, String> env, List<String> prefix, String host, List<String> arguments)
      throws IOException {
    Path log = Files.createTempFile("ackpoint-process", ".log");
    List<String> command = new ArrayList<>(prefix);
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(JvmOptions.shipped());
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.ackpoint.Main"));
    command.addAll(arguments);
    ProcessBuilder builder = new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(log.toFile());
    builder.environment().putAll(env);
    return new AckpointProcess(builder.start(), host, Integer.parseInt(env.get("ACKPOINT_HTTP_PORT")), log);
  }

  public String host() {
    return host;
  }

  public int port() {
    return port;
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** Polls the readiness probe: a separate process gives nothing else to await. */
  public void awaitReady(Duration timeout) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new AssertionError("Ackpoint exited with " + process.exitValue() + ": " + log());
      }
      try {
        if (get("/probes/readiness").statusCode() == 200) {
          return;
        }
      } catch (IOException notListeningYet) {
        // keep polling
      }
      Thread.sleep(100);
    }
    throw new AssertionError("Ackpoint was not ready within " + timeout.toSeconds() + " s: " + log());
  }

  public HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return HTTP.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** {@code POST} of a JSON body with a client token. */
  public HttpResponse<String> post(String path, String token, String json) throws IOException, InterruptedException {
    return HTTP.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(60))
        .header("Authorization", "Token " + token).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private URI uri(String path) {
    return URI.create("http://" + host + ":" + port + path);
  }

  public HttpResponse<String> get(String path, String token) throws IOException, InterruptedException {
    return get(path, Map.of("Authorization", "Token " + token));
  }

  public HttpResponse<String> get(String path, Map<String, String> headers) throws IOException, InterruptedException {
    HttpRequest.Builder request = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30));
    headers.forEach(request::header);
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** SIGKILL: nothing of Ackpoint runs after it, as after a crash or an OOM kill. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  /** SIGTERM, then its exit status. */
  public int stop() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("Ackpoint did not stop within 60 s of SIGTERM");
    }
    return process.exitValue();
  }

  /**
   * SIGTERM twice, 50 ms apart, as a stop sent to the process and then to its group arrives (the
   * second after the first was handled, not merged with it while pending), then the exit status.
   */
  public int stopTwiceAtOnce() throws IOException, InterruptedException {
    String pid = Long.toString(process.pid());
    new ProcessBuilder("sh", "-c", "kill -TERM " + pid + "; sleep 0.05; kill -TERM " + pid).inheritIO().start().waitFor();
    return awaitExit();
  }

  public int awaitExit() throws InterruptedException {
    if (!process.waitFor(120, TimeUnit.SECONDS)) {
      throw new AssertionError("Ackpoint did not exit");
    }
    return process.exitValue();
  }

  public String log() throws IOException {
    return Files.readString(log);
  }

  /**
   * The first line of its log that {@code matches}, once there is one, or null after {@code timeout}:
   * another process's log can only be polled.
   */
  public String awaitLogLine(Predicate<String> matches, Duration timeout) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      Optional<String> line = log().lines().filter(matches).findFirst();
      if (line.isPresent() || System.nanoTime() - deadline >= 0) {
        return line.orElse(null);
      }
      Thread.sleep(20);
    }
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      stop();
    }
  }
}
