package io.ackpoint.ops;

import io.ackpoint.support.AckpointProcess;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import java.net.Socket;
import java.time.Duration;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The runnable service as an operator meets it: JSON log lines with the request id, an access log,
 * request ids echoed, metrics with histogram buckets, pool, event-bus and JVM series, and Linux's
 * epoll under its sockets.
 */
class OperationsTest {

  private static AckpointProcess ackpoint;
  private static int metricsPort;

  @BeforeAll
  static void start() throws Exception {
    Map<String, String> env = AckpointProcess.environmentOn(TestDatabase.freshDatabase(), "ops_" + ProcessHandle.current().pid());
    env.put("ACKPOINT_LOG_FORMAT", "json");
    env.put("ACKPOINT_LOG_ACCESS", "true");
    metricsPort = TestAckpoint.freePort();
    env.put("ACKPOINT_METRICS_PORT", Integer.toString(metricsPort));
    // A short idle timeout, to see the metrics port close a connection that stops mid-request.
    env.put("ACKPOINT_HTTP_IDLE_TIMEOUT", "2s");
    env.put("ACKPOINT_ACKNOWLEDGEMENT_LEGACY_TIMEOUT", "1s");
    env.put("ACKPOINT_ACKNOWLEDGEMENT_MAX_WAIT", "1s");
    env.put("ACKPOINT_STREAMS_KEEPALIVE_INTERVAL", "1s");
    for (String group : new String[] {"CHECKPOINTING", "STREAM", "API"}) {
      env.put("ACKPOINT_HTTP_QUEUES_" + group + "_MAX_WAIT", "1s");
    }
    ackpoint = AckpointProcess.startReady(env);
  }

  @AfterAll
  static void stop() throws Exception {
    assertEquals(0, ackpoint.stop());
  }

  @Test
  void everyLogLineIsJsonAndAccessLinesCarryTheRequestId() throws Exception {
    var response = ackpoint.get("/probes/liveness", Map.of("X-Request-Id", "trace-42"));
    assertEquals("trace-42", response.headers().firstValue("X-Request-Id").orElseThrow());
    // The access line is written once the response has gone out: the log of another process is polled.
    long deadline = System.nanoTime() + 10_000_000_000L;
    boolean accessSeen = false;
    while (!accessSeen && System.nanoTime() < deadline) {
      for (String line : ackpoint.log().split("\n")) {
        JsonObject json = new JsonObject(line); // throws if a line is not JSON
        assertTrue(json.containsKey("timestamp") && json.containsKey("level") && json.containsKey("loggerName"), line);
        accessSeen |= "ackpoint.access".equals(json.getString("loggerName"))
            && "trace-42".equals(json.getJsonObject("mdc").getString("request_id"));
      }
      Thread.sleep(accessSeen ? 0 : 50);
    }
    assertTrue(accessSeen, ackpoint.log());
  }

  @Test
  @EnabledOnOs(value = OS.LINUX, architectures = {"amd64", "aarch64"})
  void onLinuxTheNetworkGoesThroughNettysNativeEpollTransport() throws Exception {
    // Logged once the service has started, which may be just after it answers ready.
    String transport = ackpoint.awaitLogLine(line -> line.contains("network transport:"), Duration.ofSeconds(10));
    assertNotNull(transport, ackpoint.log());
    assertTrue(transport.contains("network transport: epoll"), transport);
  }

  @Test
  void aRequestWithoutAnIdGetsOneAndAnUnusableIdIsReplaced() throws Exception {
    String generated = ackpoint.get("/probes/liveness").headers().firstValue("X-Request-Id").orElseThrow();
    assertTrue(generated.matches("[0-9a-f]{16}"), generated);
    String replaced = ackpoint.get("/probes/liveness", Map.of("X-Request-Id", "has spaces and ü"))
        .headers().firstValue("X-Request-Id").orElseThrow();
    assertTrue(replaced.matches("[0-9a-f]{16}"), replaced);
  }

  @Test
  void metricsOnTheirOwnPortHaveHistogramBucketsAndVertxPoolEventBusAndJvmSeries() throws Exception {
    ackpoint.get("/probes/readiness");
    assertEquals(404, ackpoint.get("/metrics").statusCode(), "metrics.port set: the API port does not serve them");
    var scrape = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
        java.net.URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(200, scrape.statusCode());
    String metrics = scrape.body();
    for (String series : new String[] {"ackpoint_http_requests_seconds_bucket{", "vertx_pool_", "vertx_eventbus_",
        "jvm_memory_used_bytes", "ackpoint_replication_follower_up 1.0", "ackpoint_replication_slot_retained_bytes"}) {
      assertTrue(metrics.contains(series), "missing " + series);
    }
  }

  @Test
  void theMetricsPortAnswersOtherPathsWithTheApisJson404() throws Exception {
    var other = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
        java.net.URI.create("http://127.0.0.1:" + metricsPort + "/nope")).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(404, other.statusCode());
    assertEquals("ACK_NOT_FOUND", new JsonObject(other.body()).getJsonObject("error").getString("code"), other.body());
    try (Socket socket = new Socket("127.0.0.1", metricsPort)) {
      socket.getOutputStream().write("GET /%zz HTTP/1.1\r\nHost: m\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(answer.startsWith("HTTP/1.1 400 ") && answer.contains("ACK_BAD_REQUEST"), answer);
    }
  }

  @Test
  void theMetricsPortAnswersHeadAndOtherMethodsOnMetricsWith405() throws Exception {
    var client = java.net.http.HttpClient.newHttpClient();
    var uri = java.net.URI.create("http://127.0.0.1:" + metricsPort + "/metrics");
    var head = client.send(java.net.http.HttpRequest.newBuilder(uri).method("HEAD", java.net.http.HttpRequest.BodyPublishers.noBody())
        .build(), java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(200, head.statusCode());
    assertEquals("", head.body());
    assertTrue(Long.parseLong(head.headers().firstValue("Content-Length").orElseThrow()) > 0, head.headers().toString());
    var post = client.send(java.net.http.HttpRequest.newBuilder(uri).POST(java.net.http.HttpRequest.BodyPublishers.noBody()).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(405, post.statusCode(), post.body());
    assertEquals("GET, HEAD", post.headers().firstValue("Allow").orElseThrow());
    assertEquals("ACK_METHOD_NOT_ALLOWED", new JsonObject(post.body()).getJsonObject("error").getString("code"));
  }

  @Test
  void theMetricsPortClosesAConnectionThatStopsInTheMiddleOfItsHeaders() throws Exception {
    try (Socket socket = new Socket("127.0.0.1", metricsPort)) {
      socket.setSoTimeout(60_000);
      socket.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: scraper\r\n".getBytes(StandardCharsets.US_ASCII));
      assertEquals(-1, socket.getInputStream().read(), "closed after http.idle_timeout, without an answer");
    }
  }
}
