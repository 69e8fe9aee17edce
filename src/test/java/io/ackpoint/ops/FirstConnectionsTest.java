package io.ackpoint.ops;

import io.ackpoint.support.AckpointProcess;
import io.ackpoint.support.TestDatabase;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The runnable service answers on every connection it accepts, the first ones too: a load balancer
 * or a probe connects the moment the port opens. With Vert.x's own HTTP server metrics on, Vert.x
 * 5.0.7 could accept a connection before the server's metrics existed; every request on it then
 * failed inside the metrics and was never answered. A race: the test starts the service several
 * times (it failed in 2 of 4 runs of 3 starts before the fix), and nothing else makes it fail.
 */
class FirstConnectionsTest {

  private static final int STARTS = 5;
  private static final int CONNECTIONS = 16;
  private static final int ANSWER_TIMEOUT_MS = 20_000;

  @Test
  void connectionsAcceptedAsThePortOpensAreAnswered() throws Exception {
    for (int start = 0; start < STARTS; start++) {
      try (AckpointProcess ackpoint = AckpointProcess.start(AckpointProcess.environmentOn(
          TestDatabase.freshDatabase(), "first_connections_" + ProcessHandle.current().pid() + "_" + start))) {
        List<Socket> first = connectAsThePortOpens(ackpoint, CONNECTIONS);
        for (int i = 0; i < first.size(); i++) {
          try (Socket socket = first.get(i)) {
            assertEquals("HTTP/1.1 200 OK", liveness(socket),
                "start " + start + ", connection " + i + " of the first " + first.size() + ":\n" + ackpoint.log());
          }
        }
      }
    }
  }

  /**
   * The first {@code count} connections the port accepts, opened back to back from the moment it
   * accepts one. Another process's port gives nothing to await: connection refusals are retried.
   */
  private static List<Socket> connectAsThePortOpens(AckpointProcess ackpoint, int count) throws Exception {
    long deadline = System.nanoTime() + 120_000_000_000L;
    List<Socket> sockets = new ArrayList<>();
    while (sockets.size() < count) {
      if (!ackpoint.isAlive() || System.nanoTime() > deadline) {
        fail("Ackpoint never listened: " + ackpoint.log());
      }
      Socket socket = new Socket();
      try {
        socket.connect(new InetSocketAddress(ackpoint.host(), ackpoint.port()), 1_000);
        sockets.add(socket);
      } catch (IOException notListeningYet) {
        socket.close();
        Thread.onSpinWait();
      }
    }
    return sockets;
  }

  /** The status line of {@code GET /probes/liveness} on {@code socket}, or "no answer" after the timeout. */
  private static String liveness(Socket socket) throws IOException {
    socket.setSoTimeout(ANSWER_TIMEOUT_MS);
    socket.getOutputStream().write("GET /probes/liveness HTTP/1.1\r\nHost: ackpoint\r\nConnection: close\r\n\r\n"
        .getBytes(StandardCharsets.US_ASCII));
    InputStream in = socket.getInputStream();
    StringBuilder line = new StringBuilder();
    try {
      for (int b = in.read(); b != -1 && b != '\r'; b = in.read()) {
        line.append((char) b);
      }
    } catch (SocketTimeoutException e) {
      return "no answer within " + ANSWER_TIMEOUT_MS + " ms";
    }
    return line.toString();
  }
}
