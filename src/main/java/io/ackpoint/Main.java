package io.ackpoint;

import io.ackpoint.config.AckpointConfig;
import io.ackpoint.config.ConfigException;
import io.ackpoint.config.ConfigLoader;
import io.ackpoint.embedded.EmbeddedDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Starts Ackpoint from {@code conf/ackpoint.yaml} (or {@code $ACKPOINT_CONFIG}) and the environment. */
public final class Main {

  private static final Logger LOG = LoggerFactory.getLogger(Main.class);

  private Main() {
  }

  public static void main(String[] args) throws Exception {
    AckpointConfig config;
    try {
      config = ConfigLoader.load(System.getenv());
    } catch (ConfigException e) {
      System.err.println("ackpoint: invalid configuration: " + e.getMessage());
      System.exit(2);
      return;
    }

    EmbeddedDatabase embedded = null;
    if (config.needsEmbeddedDatabase()) {
      LOG.info("starting the embedded PostgreSQL in {}", config.embedded().dataDir().toAbsolutePath());
      embedded = EmbeddedDatabase.start(config.embedded());
      config = config.withEmbeddedUri(embedded.uri());
    }

    Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(Ackpoint.eventLoops(config)));
    Ackpoint ackpoint;
    try {
      ackpoint = Ackpoint.start(vertx, config).await(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.error("Ackpoint failed to start", e);
      vertx.close().await(10, TimeUnit.SECONDS);
      if (embedded != null) {
        embedded.close();
      }
      System.exit(1);
      return;
    }
    LOG.info("Ackpoint listening on http://{}:{}", config.http().host(), config.http().port());

    EmbeddedDatabase database = embedded;
    CountDownLatch stop = new CountDownLatch(1);
    // SIGTERM and SIGINT stop Ackpoint gracefully and exit 0; a shutdown hook alone would exit 143.
    for (String name : new String[] {"TERM", "INT"}) {
      sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> stop.countDown());
    }
    stop.await();
    LOG.info("stopping: no new connections, ending streams, finishing in-flight batches");
    int status = 0;
    try {
      ackpoint.close().await(30, TimeUnit.SECONDS);
      vertx.close().await(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.warn("unclean stop", e);
      status = 1;
    } finally {
      if (database != null) {
        database.close();
      }
    }
    System.exit(status);
  }
}
