package io.ackpoint.http;

import io.ackpoint.support.AckpointExtension;
import io.ackpoint.support.LogCapture;
import io.ackpoint.support.TestKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How a request's body is framed: chunked is understood, other transfer codings are refused, a
 * request framed by a transfer coding ends its connection (it may be one that smuggles another past a
 * proxy), and an expectation other than 100-continue is refused in the JSON envelope.
 */
class HttpFramingTest {

  @RegisterExtension
  static final AckpointExtension app = AckpointExtension.plain();

  private static final String BODY = "{\"client_id\":\"c\",\"checkpoint_request_id\":\"5\"}";

  private static String head(String extraHeaders) {
    return "POST /sync/checkpoint-request HTTP/1.1\r\nHost: ackpoint\r\nAuthorization: Token " + TestKeys.token("framing")
        + "\r\nContent-Type: application/json\r\n" + extraHeaders;
  }

  private static String chunked(String body) {
    return Integer.toHexString(body.length()) + "\r\n" + body + "\r\n0\r\n\r\n";
  }

  /** Sends {@code raw} and reads everything the server answers until it closes the connection. */
  private static String exchange(String raw) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", app.running().port())) {
      socket.setSoTimeout(30_000);
      socket.getOutputStream().write(raw.getBytes(StandardCharsets.UTF_8));
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream answer = new ByteArrayOutputStream();
      in.transferTo(answer);
      return answer.toString(StandardCharsets.UTF_8);
    }
  }

  private static int responses(String answer) {
    return answer.split("HTTP/1\\.1 ", -1).length - 1;
  }

  @Test
  void aBodyInATransferCodingOtherThanChunkedIs501AndEndsTheConnection() throws Exception {
    String answer = exchange(head("Transfer-Encoding: gzip, chunked\r\n\r\n") + chunked(BODY));
    assertTrue(answer.startsWith("HTTP/1.1 501"), answer);
    assertTrue(answer.contains("ACK_TRANSFER_CODING_NOT_IMPLEMENTED"), answer);
  }

  @Test
  void aRequestWithTwoHostHeadersIs400AndEndsTheConnection() throws Exception {
    String answer = exchange("GET /probes/liveness HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"
        + "GET /probes/liveness HTTP/1.1\r\nHost: a\r\n\r\n");
    assertTrue(answer.startsWith("HTTP/1.1 400") && answer.contains("more than one Host header"), answer);
    assertEquals(1, responses(answer), answer);
  }

  /**
   * Content-Length beside Transfer-Encoding: the classic smuggling request. Whatever is pipelined
   * behind it is not answered, whichever handler would have answered it (a CORS preflight, a query
   * refused before any route, a request Netty cannot decode).
   */
  @ParameterizedTest(name = "then: {0}")
  @ValueSource(strings = {
      "GET /probes/liveness HTTP/1.1\r\nHost: ackpoint\r\n\r\n",
      "OPTIONS /sync/checkpoint-request HTTP/1.1\r\nHost: ackpoint\r\nOrigin: https://app.example\r\n"
          + "Access-Control-Request-Method: POST\r\n\r\n",
      "GET /probes/liveness?a=1&a=2 HTTP/1.1\r\nHost: ackpoint\r\n\r\n",
      "GET /probes/liveness HTTP/1.1\r\nHost: ackpoint\r\nX-Long: " + "y" + "\r\n\r\n"})
  void aChunkedRequestIsServedAndIsTheLastOfItsConnection(String pipelined) throws Exception {
    String smuggling = head("Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n") + chunked(BODY);
    String next = pipelined.contains("X-Long") ? pipelined.replace("X-Long: y", "X-Long: " + "y".repeat(20 * 1024)) : pipelined;
    String answer = exchange(smuggling + next);
    assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
    assertTrue(answer.contains("\"checkpoint_request_id\":\"5\""), answer);
    assertEquals(1, responses(answer), answer);
  }

  @Test
  void anExpectationOtherThan100ContinueIsAJson417AndNoError() throws Exception {
    try (LogCapture router = LogCapture.of("io.vertx.ext.web.RoutingContext")) {
      String answer = exchange(head("Expect: 200-ok\r\nContent-Length: " + BODY.length() + "\r\nConnection: close\r\n\r\n") + BODY);
      assertTrue(answer.startsWith("HTTP/1.1 417"), answer);
      assertTrue(answer.contains("ACK_EXPECTATION_FAILED"), answer);
      assertEquals(List.of(), router.messages("ERROR"));
    }
  }
}
