package io.ackpoint;

import io.ackpoint.impl.AckpointImpl;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;

/**
 * A running Ackpoint: its verticles deployed on a Vert.x instance, serving checkpoints over HTTP
 * (unless {@code http.enabled} is false) and over the event bus at {@link #addresses()}.
 *
 * <pre>{@code
 * Ackpoint.deploy(vertx, new AckpointOptions(new JsonObject()
 *         .put("storage", new JsonObject().put("type", "postgresql").put("uri", uri))
 *         .put("source", new JsonObject().put("type", "postgresql").put("uri", uri))
 *         .put("http", new JsonObject().put("enabled", false))))
 *     .onSuccess(ackpoint -> ...);
 * }</pre>
 */
public interface Ackpoint {

  /**
   * Validates {@code options}, starts the embedded database if the options use it, migrates storage
   * and deploys the verticles. Fails, naming the configuration key, when the options are invalid.
   */
  static Future<Ackpoint> deploy(Vertx vertx, AckpointOptions options) {
    return AckpointImpl.deploy(vertx, options);
  }

  /**
   * Ackpoint's HTTP API as a router, for the host application to mount into its own (with
   * {@code http.enabled: false}, say): {@code router.route("/ackpoint/*").subRouter(r)}. Call it on
   * the event loop that will serve it, typically in the start of the host's HTTP verticle; each
   * call makes the router of one event loop.
   */
  Future<Router> createRouter();

  /** The event-bus addresses of this Ackpoint (under {@code eventbus.prefix}). */
  AckpointAddresses addresses();

  /**
   * The port Ackpoint's own HTTP server listens on: {@code http.port}, or the one the system chose
   * when that is 0; 0 with {@code http.enabled: false}.
   */
  int httpPort();

  /** Where this Ackpoint's metrics go: the registry of the options, or Ackpoint's own Prometheus registry. */
  MeterRegistry meterRegistry();

  /**
   * Stops accepting requests, lets the batches in flight finish, ends the streams, closes the
   * database connections and stops the embedded database, if any.
   */
  Future<Void> close();
}
