package io.ackpoint.http;

import io.ackpoint.support.AckpointExtension;
import io.ackpoint.support.LogCapture;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code http.idle_timeout}: a connection on which nothing moves is closed, so that abandoned
 * connections and clients that stop mid-request do not hold sockets forever; a stream, whose
 * keepalives move, is not.
 */
@ExtendWith(VertxExtension.class)
class IdleConnectionsTest {

  private static final int SOCKET_TIMEOUT_MS = 60_000;

  @RegisterExtension
  static final AckpointExtension app = AckpointExtension.with(config -> config
      .put("http", config.getJsonObject("http").copy().put("idle_timeout", "2s").put("queues", new JsonObject()
          .put("checkpointing", new JsonObject().put("max_wait", "1s"))
          .put("stream", new JsonObject().put("max_wait", "1s"))
          .put("api", new JsonObject().put("max_wait", "1s"))))
      .put("acknowledgement", new JsonObject().put("legacy_timeout", "1s").put("max_wait", "1s"))
      .put("streams", new JsonObject().put("keepalive_interval", "400ms")));

  @Test
  void aConnectionThatStopsInTheMiddleOfItsHeadersIsClosed() throws Exception {
    assertEquals(-1, readAfterSending("GET /probes/liveness HTTP/1.1\r\nHost: ackpoint\r\n"));
  }

  /** The body never completes: the request fails as the connection closes, which is the client's doing, not an error. */
  @Test
  void aConnectionThatStopsInTheMiddleOfItsBodyIsClosedAndLoggedAsNoError() throws Exception {
    try (LogCapture router = LogCapture.of("io.vertx.ext.web.RoutingContext");
         LogCapture api = LogCapture.of("io.ackpoint.http.FailureResponses", "DEBUG")) {
      assertEquals(-1, readAfterSending("POST /sync/checkpoint-request HTTP/1.1\r\nHost: ackpoint\r\n"
          + "Authorization: Token " + TestKeys.token("u1") + "\r\nContent-Type: application/json\r\n"
          + "Content-Length: 100\r\n\r\n{\"client_id\":"));
      assertTrue(api.awaitMessage("DEBUG", Duration.ofSeconds(10)).contains("could not be read"));
      assertEquals(List.of(), router.messages("ERROR"));
    }
  }

  /** Each byte is activity, so the idle timeout alone never fires: the body has a deadline of its own. */
  @Test
  void aBodyTrickledSlowerThanTheIdleTimeoutIsAnswered408AndItsConnectionClosed() throws Exception {
    ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
    try (Socket socket = new Socket("127.0.0.1", app.running().port())) {
      socket.setSoTimeout(SOCKET_TIMEOUT_MS);
      OutputStream out = socket.getOutputStream();
      out.write(("POST /sync/checkpoint-request HTTP/1.1\r\nHost: ackpoint\r\nAuthorization: Token " + TestKeys.token("slow")
          + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      // The client's side of the test: a byte every 200 ms, ten times within the 2 s idle timeout;
      // 1000 bytes would take 200 s.
      trickle.scheduleAtFixedRate(() -> {
        try {
          out.write(' ');
          out.flush();
        } catch (IOException closed) {
          throw new UncheckedIOException(closed);
        }
      }, 200, 200, TimeUnit.MILLISECONDS);
      String answer = readUntilClosed(socket.getInputStream());
      assertTrue(answer.startsWith("HTTP/1.1 408"), answer);
      assertTrue(answer.contains("ACK_BODY_TOO_SLOW"), answer);
    } finally {
      trickle.shutdownNow();
    }
  }

  /**
   * What came before the connection ended, whether by a FIN or by a reset: a byte the client sends
   * just as the server closes (the client does not stop writing) makes the server's kernel answer it
   * with a reset, after the answer.
   */
  private static String readUntilClosed(InputStream in) throws IOException {
    ByteArrayOutputStream received = new ByteArrayOutputStream();
    byte[] buffer = new byte[4096];
    try {
      for (int n; (n = in.read(buffer)) >= 0; ) {
        received.write(buffer, 0, n);
      }
    } catch (SocketException reset) {
      // the end of the connection, as EOF is
    }
    return received.toString(StandardCharsets.US_ASCII);
  }

  @Test
  void anIdleKeptAliveConnectionIsClosed() throws Exception {
    try (Socket socket = new Socket("127.0.0.1", app.running().port())) {
      socket.setSoTimeout(SOCKET_TIMEOUT_MS);
      socket.getOutputStream().write("GET /probes/liveness HTTP/1.1\r\nHost: ackpoint\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      InputStream in = socket.getInputStream();
      String response = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
      assertEquals("HTTP/1.1 200", response);
      while (in.read() != -1) {
        // the rest of the response, then the end of the connection
      }
    }
  }

  /** Five keepalives at 400 ms take longer than the 2 s idle timeout: the stream was never idle. */
  @Test
  void anOpenStreamOutlivesTheIdleTimeoutThroughItsKeepalives(Vertx vertx) {
    try (StreamClient stream = StreamClient.syncStream(vertx, app.running().port(), TestKeys.token("u2"), "c1")) {
      for (int keepalives = 0; keepalives < 6; keepalives++) {
        stream.nextMatching(line -> line.containsKey("token_expires_in"));
      }
    }
  }

  /** Sends {@code partial} and answers the first byte read back: -1 once the server closed the connection. */
  private static int readAfterSending(String partial) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", app.running().port())) {
      socket.setSoTimeout(SOCKET_TIMEOUT_MS);
      socket.getOutputStream().write(partial.getBytes(StandardCharsets.US_ASCII));
      return socket.getInputStream().read();
    }
  }
}
