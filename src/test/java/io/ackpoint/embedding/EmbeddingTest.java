package io.ackpoint.embedding;

import io.ackpoint.Ackpoint;
import io.ackpoint.AckpointOptions;
import io.ackpoint.support.Await;
import io.ackpoint.support.LogCapture;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** README, Embedding: an application mounts Ackpoint's routes into its own router and keeps its metrics. */
@ExtendWith(VertxExtension.class)
class EmbeddingTest {

  /** The host application of each test: its port, its registry, and a client with a token for it. */
  private final int port = TestAckpoint.freePort();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final JsonObject config = TestAckpoint.configJson(TestDatabase.freshDatabase());
  private WebClient client;
  private String token;

  @BeforeEach
  void client(Vertx vertx) {
    client = WebClient.create(vertx);
    token = TestKeys.token(vertx, "embedded-user");
  }

  @Test
  void anApplicationServesAckpointsRoutesBesideItsOwnAndGetsItsMetrics(Vertx vertx, VertxTestContext test) {
    vertx.deployVerticle(new HostApplication(config, registry, port))
        .compose(id -> client.get(port, "127.0.0.1", "/hello").send()
            .compose(hello -> client.get(port, "127.0.0.1", "/ackpoint/write-checkpoint2.json?client_id=c")
                .putHeader("Authorization", "Token " + token).send()
                .map(created -> {
                  test.verify(() -> {
                    assertEquals("the application's own route", hello.bodyAsString());
                    assertEquals(200, created.statusCode(), created.bodyAsString());
                    assertEquals("1", created.bodyAsJsonObject().getJsonObject("data").getString("write_checkpoint"));
                    // Recorded before the answer goes out (an HTTP timer is recorded once it has gone).
                    assertTrue(registry.get("ackpoint.batches").tag("outcome", "ok").counter().count() >= 1);
                    assertNotNull(registry.find("ackpoint.streams.open").gauge());
                  });
                  return id;
                })))
        .compose(vertx::undeploy)
        .onComplete(test.succeedingThenComplete());
  }

  @Test
  void theMountedRoutesAnswerBadInputUnknownPathsAndWrongMethodsInJsonAsAckpointsOwnServerDoes(Vertx vertx, VertxTestContext test) {
    LogCapture routerLog = LogCapture.of("io.vertx.ext.web.RoutingContext");
    vertx.deployVerticle(new HostApplication(config, registry, port))
        .compose(id -> client.post(port, "127.0.0.1", "/ackpoint/sync/checkpoint-request")
            .putHeader("Authorization", "Token " + token).putHeader("Content-Type", "application/json")
            .sendBuffer(Buffer.buffer("{\"checkpoint_request_id\":\"8\",\"checkpoint_request_id\":\"9\"}"))
            .compose(duplicate -> client.post(port, "127.0.0.1", "/ackpoint/sync/checkpoint-request")
                .putHeader("Authorization", "Token " + token).putHeader("Content-Type", "application/json")
                .sendBuffer(Buffer.buffer("{\"client_id\":\"" + "x".repeat(200_000) + "\"}"))
                .compose(tooLarge -> client.get(port, "127.0.0.1", "/ackpoint/nope").send()
                    .compose(unknown -> client.delete(port, "127.0.0.1", "/ackpoint/write-checkpoint2.json").send()
                        .map(wrongMethod -> {
                          test.verify(() -> {
                            assertError(400, "ACK_INVALID_JSON", duplicate.statusCode(), duplicate.bodyAsString());
                            assertError(413, "ACK_PAYLOAD_TOO_LARGE", tooLarge.statusCode(), tooLarge.bodyAsString());
                            assertError(404, "ACK_NOT_FOUND", unknown.statusCode(), unknown.bodyAsString());
                            assertError(405, "ACK_METHOD_NOT_ALLOWED", wrongMethod.statusCode(), wrongMethod.bodyAsString());
                            assertEquals("GET", wrongMethod.getHeader("Allow"));
                            assertEquals(List.of(), routerLog.messages("ERROR"));
                            // Counted by the route as Ackpoint matched it, not as unmatched.
                            assertNotNull(registry.find("ackpoint.http.requests").tag("route", "/sync/checkpoint-request")
                                .tag("status", "400").timer());
                          });
                          return id;
                        })))))
        .compose(vertx::undeploy)
        .eventually(() -> {
          routerLog.close();
          return Future.succeededFuture();
        })
        .onComplete(test.succeedingThenComplete());
  }

  @Test
  void aBodyRefusedByTheBodyHandlerOfTheApplicationsRouterIsAnswered413NamingThatLimit(Vertx vertx) {
    Ackpoint ackpoint = Await.result(Ackpoint.deploy(vertx, new AckpointOptions(config).setHttpEnabled(false)));
    Await.result(vertx.deployVerticle(new VerticleBase() {
      @Override
      public Future<?> start() {
        return ackpoint.createRouter().compose(ackpointRoutes -> {
          Router router = Router.router(vertx);
          router.route().handler(BodyHandler.create().setBodyLimit(50));
          router.route("/ackpoint/*").subRouter(ackpointRoutes);
          return vertx.createHttpServer().requestHandler(router).listen(port, "127.0.0.1");
        });
      }
    }));
    String body = "{\"client_id\":\"" + "x".repeat(100) + "\",\"checkpoint_request_id\":\"1\"}";
    var refused = Await.result(client.post(port, "127.0.0.1", "/ackpoint/sync/checkpoint-request")
        .putHeader("Authorization", "Token " + token).putHeader("Content-Type", "application/json")
        .sendBuffer(Buffer.buffer(body)));
    assertError(413, "ACK_PAYLOAD_TOO_LARGE", refused.statusCode(), refused.bodyAsString());
    String description = refused.bodyAsJsonObject().getJsonObject("error").getString("description");
    assertTrue(description.contains("application's router"), description);
    Await.result(ackpoint.close());
  }

  private static void assertError(int status, String code, int actualStatus, String body) {
    assertEquals(status, actualStatus, body);
    assertEquals(code, new JsonObject(body).getJsonObject("error").getString("code"), body);
  }

  @Test
  void theReadmeShowsTheExampleThisTestRuns() throws IOException {
    String source = Files.readString(Path.of("src/test/java/io/ackpoint/embedding/HostApplication.java"));
    String example = source.substring(source.indexOf("// embedding-example:start") + "// embedding-example:start".length(),
        source.indexOf("// embedding-example:end")).strip();
    assertTrue(Files.readString(Path.of("README.md")).contains(example), "README's Embedding section must show HostApplication as it is");
  }
}
