package io.ackpoint.http;

import io.ackpoint.support.AckpointExtension;
import io.ackpoint.support.LogCapture;
import io.ackpoint.support.TestKeys;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.ByteArrayOutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Request targets that match no route as written are the client's mistake: answered in the JSON
 * envelope with a 4xx, never a 500, and nothing logged at ERROR for any client to provoke.
 */
class RequestTargetTest {

  @RegisterExtension
  static final AckpointExtension app = AckpointExtension.plain();

  private LogCapture api;
  private LogCapture router;

  @BeforeEach
  void capture() {
    api = LogCapture.of("io.ackpoint.http.FailureResponses");
    router = LogCapture.of("io.vertx.ext.web.RoutingContext");
  }

  @AfterEach
  void nothingLoggedAtError() {
    try {
      assertEquals(List.of(), api.messages("ERROR"));
      assertEquals(List.of(), router.messages("ERROR"));
    } finally {
      api.close();
      router.close();
    }
  }

  @Test
  void aTargetThatIsNotAPathIsAJson404() throws Exception {
    assertError(404, "ACK_NOT_FOUND", exchange("OPTIONS * HTTP/1.1\r\nHost: ackpoint\r\nConnection: close\r\n\r\n"));
  }

  @Test
  void aPathWithABrokenPercentEscapeIsAJson400() throws Exception {
    assertError(400, "ACK_BAD_REQUEST", exchange("GET /%zz HTTP/1.1\r\nHost: ackpoint\r\nConnection: close\r\n\r\n"));
  }

  @Test
  void aWrongMethodOnARoutesPathIs405WithItsMethods() throws Exception {
    String answer = exchange("POST /whoami HTTP/1.1\r\nHost: ackpoint\r\nAuthorization: Token " + TestKeys.token("slash")
        + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    assertError(405, "ACK_METHOD_NOT_ALLOWED", answer);
    assertTrue(answer.toLowerCase().contains("\r\nallow: get\r\n"), answer);
  }

  @Test
  void aRoutesPathWithDotSegmentsSentAsIsIsAJson404() throws Exception {
    assertError(404, "ACK_NOT_FOUND", exchange("GET /probes/../metrics HTTP/1.1\r\nHost: ackpoint\r\nConnection: close\r\n\r\n"));
  }

  private static void assertError(int status, String code, String answer) {
    assertTrue(answer.startsWith("HTTP/1.1 " + status + " "), answer);
    String body = answer.substring(answer.indexOf("\r\n\r\n") + 4);
    assertEquals(code, new JsonObject(body).getJsonObject("error").getString("code"), answer);
  }

  /** Sends {@code raw} and reads everything the server answers until it closes the connection. */
  private static String exchange(String raw) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", app.running().port())) {
      socket.setSoTimeout(30_000);
      socket.getOutputStream().write(raw.getBytes(StandardCharsets.UTF_8));
      ByteArrayOutputStream answer = new ByteArrayOutputStream();
      socket.getInputStream().transferTo(answer);
      return answer.toString(StandardCharsets.UTF_8);
    }
  }
}
