package io.ackpoint.support;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * Starts an Ackpoint on a fresh database for a test class ({@code @RegisterExtension static}) or for
 * each test ({@code @RegisterExtension} on an instance field), on a Vert.x of its own, and stops it
 * afterwards:
 *
 * <pre>{@code
 * @RegisterExtension
 * final AckpointExtension app = AckpointExtension.with(TestAckpoint::withFollower);
 * ... app.api().writeCheckpoint2(token, "c1") ...
 * }</pre>
 */
public final class AckpointExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

  private final UnaryOperator<JsonObject> customize;
  private Consumer<Sql> prepare = sql -> { };
  private boolean perClass;
  private Vertx vertx;
  private RunningAckpoint running;

  private AckpointExtension(UnaryOperator<JsonObject> customize) {
    this.customize = customize;
  }

  /** The test configuration (HTTP on a free loopback port, no follower), changed by {@code customize}. */
  public static AckpointExtension with(UnaryOperator<JsonObject> customize) {
    return new AckpointExtension(customize);
  }

  public static AckpointExtension plain() {
    return with(config -> config);
  }

  /** Runs {@code prepare} on the fresh database before Ackpoint starts on it (tables of the application, say). */
  public AckpointExtension preparing(Consumer<Sql> prepare) {
    this.prepare = prepare;
    return this;
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    perClass = true;
    start();
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    if (!perClass) {
      start();
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    if (!perClass) {
      stop();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    stop();
  }

  private void start() {
    vertx = Vertx.vertx();
    String database = TestDatabase.freshDatabase();
    try (Sql setup = new Sql(vertx, database)) {
      prepare.accept(setup);
    }
    running = RunningAckpoint.on(vertx, database, customize);
  }

  private void stop() {
    try {
      if (running != null) {
        running.close();
      }
    } finally {
      running = null;
      if (vertx != null) {
        Await.result(vertx.close());
        vertx = null;
      }
    }
  }

  public RunningAckpoint running() {
    return running;
  }

  public io.ackpoint.Ackpoint ackpoint() {
    return running.ackpoint;
  }

  public String database() {
    return running.database;
  }

  public Vertx vertx() {
    return running.vertx;
  }

  public ApiClient api() {
    return running.api;
  }

  public Sql sql() {
    return running.sql;
  }

  public int port() {
    return running.port();
  }

  public JsonObject config() {
    return running.config;
  }

  public StreamClient stream(String token, String clientId) {
    return running.stream(token, clientId);
  }

  public String metrics() {
    return running.metrics();
  }
}
