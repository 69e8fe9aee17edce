package io.ackpoint.http;

import io.ackpoint.support.AckpointExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code http.max_connections}: beyond it a new connection is closed as soon as accepted, across all
 * HTTP verticles, so that a client opening sockets cannot take every file descriptor; once one
 * closes, a new one is served again.
 */
class ConnectionLimitTest {

  private static final int LIMIT = 3;

  @RegisterExtension
  static final AckpointExtension app = AckpointExtension.with(config -> config
      .put("http", config.getJsonObject("http").copy().put("max_connections", LIMIT)));

  /** A connection that sent a request: the status line it got, or null if the server closed it unanswered. */
  private static String statusOn(Socket socket) throws IOException {
    socket.setSoTimeout(30_000);
    socket.getOutputStream().write("GET /probes/liveness HTTP/1.1\r\nHost: ackpoint\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    InputStream in = socket.getInputStream();
    byte[] status = in.readNBytes(12);
    return status.length < 12 ? null : new String(status, StandardCharsets.US_ASCII);
  }

  @Test
  void aConnectionBeyondTheLimitIsClosedAndOneIsServedAgainOnceAnotherCloses() throws Exception {
    List<Socket> held = new ArrayList<>();
    try {
      for (int i = 0; i < LIMIT; i++) {
        Socket socket = new Socket("127.0.0.1", app.running().port());
        held.add(socket);
        assertEquals("HTTP/1.1 200", statusOn(socket));
      }
      try (Socket beyond = new Socket("127.0.0.1", app.running().port())) {
        assertEquals(null, statusOn(beyond), "closed unanswered");
      }
      String metrics = app.metrics();
      assertTrue(metrics.contains("ackpoint_http_connections_refused_total 1.0"), metrics);
      assertTrue(metrics.contains("ackpoint_http_connections_open " + LIMIT + ".0"), metrics);

      held.remove(0).close();
      // The server hears of the close a moment after the client made it.
      long deadline = System.nanoTime() + 10_000_000_000L;
      String status;
      do {
        assertTrue(System.nanoTime() < deadline, "a connection was served again after one closed");
        try (Socket again = new Socket("127.0.0.1", app.running().port())) {
          status = statusOn(again);
        }
      } while (status == null);
      assertEquals("HTTP/1.1 200", status);
    } finally {
      for (Socket socket : held) {
        socket.close();
      }
    }
  }
}
