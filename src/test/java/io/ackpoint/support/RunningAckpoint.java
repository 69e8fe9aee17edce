package io.ackpoint.support;

import io.ackpoint.Ackpoint;
import io.ackpoint.AckpointOptions;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.function.UnaryOperator;

/** An Ackpoint running for a test on a fresh database, with an HTTP client and direct SQL on its storage. */
public final class RunningAckpoint implements AutoCloseable {

  public final Vertx vertx;
  public final String database;
  public final JsonObject config;
  public final Ackpoint ackpoint;
  public final ApiClient api;
  public final Sql sql;

  private RunningAckpoint(Vertx vertx, String database, JsonObject config) {
    this.vertx = vertx;
    this.database = database;
    this.config = config;
    this.sql = new Sql(vertx, database);
    this.ackpoint = Await.result(Ackpoint.deploy(vertx, new AckpointOptions(config)));
    this.api = new ApiClient(vertx, TestAckpoint.portOf(config));
  }

  /** A fresh database, the test configuration on it, changed by {@code customize}, and Ackpoint started. */
  public static RunningAckpoint fresh(Vertx vertx, UnaryOperator<JsonObject> customize) {
    String database = TestDatabase.freshDatabase();
    return new RunningAckpoint(vertx, database, customize.apply(TestAckpoint.configJson(database)));
  }

  /** Like {@link #fresh}, for a test that prepares the database before Ackpoint starts. */
  public static RunningAckpoint on(Vertx vertx, String database, UnaryOperator<JsonObject> customize) {
    return new RunningAckpoint(vertx, database, customize.apply(TestAckpoint.configJson(database)));
  }

  public int port() {
    return TestAckpoint.portOf(config);
  }

  public StreamClient stream(String token, String clientId) {
    return StreamClient.syncStream(vertx, port(), token, clientId);
  }

  /** The Prometheus text of this Ackpoint's own registry, as {@code GET /metrics} serves it. */
  public String metrics() {
    return ((PrometheusMeterRegistry) ackpoint.meterRegistry()).scrape();
  }

  @Override
  public void close() {
    try {
      Await.result(ackpoint.close());
    } finally {
      api.close();
      sql.close();
    }
  }
}
