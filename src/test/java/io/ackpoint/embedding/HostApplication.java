package io.ackpoint.embedding;

import io.ackpoint.Ackpoint;
import io.ackpoint.AckpointOptions;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;

// embedding-example:start
/**
 * An application that embeds Ackpoint: no HTTP port of Ackpoint's own, its routes mounted under
 * /ackpoint in the application's router, its metrics in the application's registry.
 */
public class HostApplication extends VerticleBase {

  private final JsonObject ackpointConfig;
  private final MeterRegistry registry;
  private final int port;
  private Ackpoint ackpoint;

  public HostApplication(JsonObject ackpointConfig, MeterRegistry registry, int port) {
    this.ackpointConfig = ackpointConfig;
    this.registry = registry;
    this.port = port;
  }

  @Override
  public Future<?> start() {
    AckpointOptions options = new AckpointOptions(ackpointConfig)
        .setHttpEnabled(false)
        .setMeterRegistry(registry);
    return Ackpoint.deploy(vertx, options)
        .compose(deployed -> {
          ackpoint = deployed;
          return ackpoint.createRouter();
        })
        .compose(ackpointRoutes -> {
          Router router = Router.router(vertx);
          router.get("/hello").handler(ctx -> ctx.end("the application's own route"));
          router.route("/ackpoint/*").subRouter(ackpointRoutes);
          return vertx.createHttpServer().requestHandler(router).listen(port, "127.0.0.1");
        });
  }

  @Override
  public Future<?> stop() {
    return ackpoint == null ? Future.succeededFuture() : ackpoint.close();
  }
}
// embedding-example:end
