package io.ackpoint;

import io.ackpoint.cluster.HazelcastSetup;
import io.ackpoint.config.AckpointConfig;
import io.ackpoint.config.ConfigException;
import io.ackpoint.config.ConfigLoader;
import io.ackpoint.impl.AckpointImpl;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.core.internal.VertxInternal;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MetricsDomain;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The runnable service, a shell over {@link Ackpoint#deploy}: {@code conf/ackpoint.yaml} (or
 * {@code $ACKPOINT_CONFIG}) and the {@code ACKPOINT_*} variables become the options; SIGTERM and
 * SIGINT stop it gracefully.
 */
public final class Main {

  private static final Logger LOG = LoggerFactory.getLogger(Main.class);
  /** Signals this close to the first are the same stop, sent twice (see main). */
  private static final long SAME_STOP_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

  private Main() {
  }

  private static final String USAGE = "usage: java -jar ackpoint.jar (scripts/run), without arguments. The configuration is"
      + " conf/ackpoint.yaml of the working directory, or the file that ACKPOINT_CONFIG names; an ACKPOINT_ variable"
      + " overrides any key (ACKPOINT_HTTP_PORT=8081 for http.port). README.md, Configuration, lists the keys.";

  public static void main(String[] args) throws Exception {
    // Arguments were ignored: --config=other.yaml started on conf/ackpoint.yaml, unbeknown to the operator.
    if (args.length > 0) {
      boolean help = args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"));
      if (help) {
        System.out.println(USAGE);
        System.exit(0);
      }
      System.err.println("ackpoint: no arguments are taken (given: " + String.join(" ", args) + "); " + USAGE);
      System.exit(2);
    }
    Logging.silenceUntilConfigured();
    AckpointOptions options;
    AckpointConfig config;
    try {
      options = new AckpointOptions(ConfigLoader.loadJson(System.getenv()));
      config = options.toConfig();
    } catch (ConfigException e) {
      System.err.println("ackpoint: invalid configuration: " + e.getMessage() + withoutFileHint());
      System.exit(2);
      return;
    }
    Logging.configure(config.log());
    Path configFile = ConfigLoader.configFile(System.getenv());
    LOG.info("configuration: {}, defaults and ACKPOINT_* variables", Files.exists(configFile) ? configFile.toAbsolutePath() : "no file");
    CountDownLatch stop = new CountDownLatch(1);
    // SIGTERM and SIGINT stop Ackpoint gracefully and exit 0; a shutdown hook alone would exit 143.
    // Handled from here on, start-up included: a stop asked for while Ackpoint starts (an orchestrator
    // that gives up on it) takes effect once it has started, and closes the embedded PostgreSQL with it
    // instead of leaving it running.
    // A second signal exits at once (a start-up stuck on a database, an impatient Ctrl-C); the next
    // start stops an embedded PostgreSQL left running. Not one within a quarter of a second of the
    // first: that is the same stop sent twice, to the process and then to its group (GNU timeout,
    // a kill of the process group), which no one typed.
    AtomicLong firstSignal = new AtomicLong();
    for (String name : new String[] {"TERM", "INT"}) {
      sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> {
        long now = System.nanoTime();
        if (!firstSignal.compareAndSet(0, now)) {
          if (now - firstSignal.get() < SAME_STOP_NANOS) {
            return;
          }
          System.err.println("ackpoint: a second " + signal.getName() + ": exiting at once");
          Runtime.getRuntime().halt(1);
        }
        stop.countDown();
      });
    }

    // One registry for everything: Vert.x's own metrics (JVM, pools, event bus) and Ackpoint's.
    // Not Vert.x's HTTP server metrics: Ackpoint times its requests itself (ackpoint_http_requests),
    // and Vert.x 5.0.7 can accept a connection in the instant its port opens, before the server's
    // metrics exist; every request on that connection then fails inside the metrics and is never
    // answered (FirstConnectionsTest).
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    options.setMeterRegistry(registry);
    // Linux's epoll rather than Java NIO where Netty's native library loads (x86-64 and ARM64 are
    // bundled): 11 % more checkpoint requests per second for 16 % less CPU each under scripts/bench's
    // load (README, Benchmarks). Elsewhere Vert.x falls back to NIO; the start says which it uses.
    //
    // Vert.x's check for blocked threads runs every 5 s, not every second: an event loop blocked for
    // 7 s or longer is always reported, within 5 s of its limit (2 s), and one blocked for 10 s or
    // longer with the stack trace Vert.x adds past 5 s; a shorter block may end unseen between two
    // checks (as one under 3 s could at a 1 s period). Each check wakes a thread, and that thread was
    // the most costly one of an idle Ackpoint at a 2 s period (README, Benchmarks).
    VertxOptions vertxOptions = new VertxOptions().setEventLoopPoolSize(AckpointImpl.eventLoops(config)).setPreferNativeTransport(true)
        .setBlockedThreadCheckInterval(5000)
        .setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true).setJvmMetricsEnabled(true)
            .addDisabledMetricsCategory(MetricsDomain.HTTP_SERVER));
    VertxBuilder builder = Vertx.builder().withMetrics(new MicrometerMetricsFactory(registry));
    Vertx vertx;
    if (config.cluster().enabled()) {
      try {
        vertx = builder.with(vertxOptions.setEventBusOptions(HazelcastSetup.eventBus(config.cluster())))
            .withClusterManager(HazelcastSetup.clusterManager(config.cluster()))
            .buildClustered().await(120, TimeUnit.SECONDS);
      } catch (Exception e) {
        System.err.println("ackpoint: could not join the cluster on " + config.cluster().host() + ":" + config.cluster().port()
            + " (cluster.host, cluster.port): " + reason(e));
        LOG.debug("cluster failure", e);
        System.exit(1);
        return;
      }
    } else {
      vertx = builder.with(vertxOptions).build();
    }
    letIdleEventLoopsSleep(vertx);
    Ackpoint ackpoint;
    try {
      ackpoint = Ackpoint.deploy(vertx, options).await(120, TimeUnit.SECONDS);
    } catch (Exception e) {
      // One line an operator can act on: what failed, and where; the trace only for debugging.
      boolean invalid = e instanceof ConfigException;
      System.err.println(invalid ? "ackpoint: invalid configuration: " + e.getMessage() : "ackpoint: could not start: " + reason(e));
      LOG.debug("start-up failure", e);
      // Exits whatever closing does: a start-up stuck on a database that never answers may leave
      // Vert.x unable to close in time, and its threads would keep a process without a port alive.
      try {
        vertx.close().await(10, TimeUnit.SECONDS);
      } catch (Exception closing) {
        LOG.debug("Vert.x did not close after the failed start", closing);
      }
      System.exit(invalid ? 2 : 1);
      return;
    }
    if (vertx.isNativeTransportEnabled()) {
      LOG.info("network transport: epoll (Netty's native transport)");
    } else {
      Throwable cause = vertx.unavailableNativeTransportCause();
      LOG.info("network transport: Java NIO, since Netty's native epoll transport is not available here{}",
          cause == null ? "" : " (" + reason(cause) + ")");
    }
    LOG.info("Ackpoint {}{}", config.http().enabled() ? "listening on http://" + config.http().host() + ":" + ackpoint.httpPort()
        : "started (http.enabled is false: no HTTP port)",
        config.cluster().enabled() ? ", a node of the cluster on " + config.cluster().advertisedHost() + ":" + config.cluster().port() : "");

    stop.await();
    LOG.info("stopping: no new connections, ending streams, finishing in-flight batches");
    int status = 0;
    try {
      // Bounded as a whole, so that an orchestrator's grace period (30 s by default) is not overrun. In a
      // cluster, closing Ackpoint hands the follower over first; closing Vert.x then leaves the cluster.
      long deadline = System.nanoTime() + config.shutdownTimeout().toNanos();
      ackpoint.close().await(config.shutdownTimeout().toMillis(), TimeUnit.MILLISECONDS);
      vertx.close().await(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      LOG.warn("unclean stop: the stop did not complete within shutdown.timeout ({} s): requests or batches still in flight"
          + " are cut off; an embedded PostgreSQL that did not stop is asked to when this process exits, and the next"
          + " start stops it if it still runs", config.shutdownTimeout().toSeconds());
      status = 1;
    } catch (Exception e) {
      LOG.warn("unclean stop: {}", e.getMessage() == null ? e.toString() : e.getMessage());
      status = 1;
    }
    System.exit(status);
  }

  /**
   * Netty lets an event loop that has nothing scheduled sleep for a second at most, so it wakes every
   * second for nothing: Vert.x's acceptor has nothing scheduled ever, nor has an event loop that no
   * timer uses. A task once a day on each lets them sleep until there is work; an idle Ackpoint's
   * CPU is mostly such wake-ups (README, Benchmarks). Closing Vert.x cancels the tasks.
   */
  private static void letIdleEventLoopsSleep(Vertx vertx) {
    VertxInternal internal = (VertxInternal) vertx;
    for (EventLoopGroup group : List.of(internal.acceptorEventLoopGroup(), internal.nettyEventLoopGroup())) {
      for (EventExecutor loop : group) {
        loop.scheduleAtFixedRate(() -> { }, 1, 1, TimeUnit.DAYS);
      }
    }
  }

  /** Started where there is no conf/ackpoint.yaml, the defaults alone may be what is invalid: says so. */
  private static String withoutFileHint() {
    Path file = ConfigLoader.configFile(System.getenv());
    boolean named = System.getenv(ConfigLoader.CONFIG_FILE_VARIABLE) != null && !System.getenv(ConfigLoader.CONFIG_FILE_VARIABLE).isBlank();
    return named || Files.exists(file) ? "" : " (no configuration file: " + file.toAbsolutePath() + " does not exist; start"
        + " Ackpoint from the directory that holds conf/, or set ACKPOINT_CONFIG)";
  }

  private static String reason(Throwable failure) {
    Throwable e = failure instanceof java.util.concurrent.TimeoutException ? failure
        : failure.getCause() != null && failure.getMessage() == null ? failure.getCause() : failure;
    return e instanceof java.util.concurrent.TimeoutException ? "start-up did not complete within 120 s"
        : e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }
}
