package io.ackpoint.impl;

import io.ackpoint.Ackpoint;
import io.ackpoint.AckpointAddresses;
import io.ackpoint.AckpointExceptionCodec;
import io.ackpoint.AckpointOptions;
import io.ackpoint.ack.AckEngineVerticle;
import io.ackpoint.ack.AckVerticle;
import io.ackpoint.ack.ExternalProgressVerticle;
import io.ackpoint.auth.JwtAuthenticator;
import io.ackpoint.batch.BatcherVerticle;
import io.ackpoint.cluster.Leadership;
import io.ackpoint.cluster.NodeRole;
import io.ackpoint.cluster.NodeStatusVerticle;
import io.ackpoint.compaction.CompactionVerticle;
import io.ackpoint.config.AckpointConfig;
import io.ackpoint.config.ConfigException;
import io.ackpoint.config.FreePorts;
import io.ackpoint.config.DevelopmentKey;
import io.ackpoint.core.PendingCheckpointsCodec;
import io.ackpoint.core.PositionReachedCodec;
import io.ackpoint.embedded.EmbeddedDatabase;
import io.ackpoint.http.HttpApi;
import io.ackpoint.http.HttpQueues;
import io.ackpoint.http.ConnectionLimit;
import io.ackpoint.http.HttpSettings;
import io.ackpoint.http.HttpVerticle;
import io.ackpoint.http.MetricsVerticle;
import io.ackpoint.metrics.AckpointMetrics;
import io.ackpoint.source.ReplicationSource;
import io.ackpoint.storage.AcknowledgementHistory;
import io.ackpoint.storage.CheckpointStorage;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.AsyncResult;
import io.vertx.core.Closeable;
import io.vertx.core.Completable;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.Deployable;
import io.vertx.core.Promise;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import io.vertx.ext.web.Router;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The composition root: the one place that knows every implementation, builds them once per
 * Ackpoint, and wires them to each other through the interfaces and listeners each package owns.
 */
public final class AckpointImpl implements Ackpoint {

  private static final Logger LOG = LoggerFactory.getLogger(AckpointImpl.class);
  /** How much longer than a batch's request timeout, the longest bound of a step of a close, one may take unremarked. */
  private static final Duration SLOW_CLOSE_MARGIN = Duration.ofSeconds(10);
  /** Numbers the Ackpoints of this process whose http.port is 0 (see {@link HttpVerticle}). */
  private static final AtomicInteger RANDOM_PORTS = new AtomicInteger();

  private final Vertx vertx;
  private final AckpointConfig config;
  private final AckpointMetrics metrics;
  private final HttpSettings http;
  private final EmbeddedDatabase embedded;
  private final Databases databases;
  private final CheckpointStorage storage;
  private final AcknowledgementHistory history;
  private final ReplicationSource source;
  private final VertxClaims claims;
  private final List<Deployed> deployments = new ArrayList<>();
  private final List<MountedApi> mounted = new CopyOnWriteArrayList<>();
  private final List<HttpVerticle> servers = new CopyOnWriteArrayList<>();
  private final Closeable closeHook = completion -> close().onComplete(completion);
  /** Set by the first {@link #close()}. */
  private volatile Future<Void> closing;

  private AckpointImpl(Vertx vertx, AckpointConfig config, AckpointMetrics metrics, HttpSettings http,
                       EmbeddedDatabase embedded, Databases databases, CheckpointStorage storage,
                       AcknowledgementHistory history, ReplicationSource source, VertxClaims claims) {
    this.vertx = vertx;
    this.claims = claims;
    this.config = config;
    this.metrics = metrics;
    this.http = http;
    this.embedded = embedded;
    this.databases = databases;
    this.storage = storage;
    this.history = history;
    this.source = source;
  }

  public static Future<Ackpoint> deploy(Vertx vertx, AckpointOptions options) {
    // Checked first: a closed Vert.x refuses blocking tasks by throwing, not with a failed future.
    if (((VertxInternal) vertx).closeFuture().isClosed()) {
      return Future.failedFuture(new IllegalStateException("the Vert.x is closed: Ackpoint cannot start on it"));
    }
    AckpointConfig configured;
    try {
      configured = options.toConfig();
      JwtAuthenticator.requireUsableKeys(configured.auth());
      HttpApi.requireServable(configured);
    } catch (RuntimeException invalid) {
      return Future.failedFuture(invalid);
    }
    String clusterProblem = clusterProblem(vertx, configured);
    if (clusterProblem != null) {
      return Future.failedFuture(new ConfigException("cluster.enabled", clusterProblem));
    }
    VertxClaims claims;
    // The metrics port serves Prometheus's text: Ackpoint's own registry, or one the host gave of that kind.
    MeterRegistry given = options.getMeterRegistry();
    boolean servesMetrics = given == null || given instanceof PrometheusMeterRegistry;
    try {
      claims = VertxClaims.claim(vertx, configured, servesMetrics);
    } catch (ConfigException taken) {
      return Future.failedFuture(taken);
    }
    AckpointExceptionCodec.registerOn(vertx);
    PositionReachedCodec.registerOn(vertx);
    // Before any verticle: the engine may decode another node's batches before this node's batcher starts.
    PendingCheckpointsCodec.registerOn(vertx);
    Starting starting = new Starting(vertx);
    // The verticle deploying Ackpoint, if any: its undeploy takes the verticles Ackpoint deploys with it.
    ContextInternal host = (ContextInternal) Vertx.currentContext();
    // Unordered: a host verticle's own blocking tasks do not hold it up.
    Future<Ackpoint> outcome = vertx.<Void>executeBlocking(() -> {
      FreePorts.require(configured, servesMetrics);
      return null;
    }, false).compose(free -> startEmbedded(vertx, configured)).compose(embedded -> {
      AckpointConfig config = embedded == null ? configured : configured.withEmbeddedUri(embedded.uri());
      return starting.unlessVertxClosing()
          .compose(v -> Backends.migrate(vertx, config))
          .compose(v -> {
            AckpointImpl ackpoint = create(vertx, config, options.getMeterRegistry(), embedded, claims);
            if (embedded != null) {
              embedded.watchExit(vertx);
            }
            // Its verticles all deployed, yet gone with the verticle deploying it: closed, as a failure.
            return ackpoint.deployVerticles().compose(deployed -> hostUndeployed(vertx, host)
                ? Future.failedFuture(undeployedWhileStarting(host, null)) : Future.succeededFuture())
                .map(deployed -> {
              // Closing the Vert.x closes this Ackpoint first (its hooks run before its verticles are
              // undeployed): otherwise the embedded PostgreSQL would outlive the process.
              ((VertxInternal) vertx).addCloseHook(ackpoint.closeHook);
              return (Ackpoint) ackpoint;
            }).recover(failure -> ackpoint.close().transform(ignored -> Future.failedFuture(failure)));
          })
          .recover(failure -> stopEmbedded(vertx, embedded).transform(ignored -> Future.failedFuture(failure)));
    }).recover(failure -> Future.failedFuture(hostUndeployed(vertx, host) && !(failure instanceof HostUndeployed)
        ? undeployedWhileStarting(host, failure) : failure)).onFailure(failure -> claims.release());
    return outcome.andThen(starting::ended);
  }

  /** Whether the verticle on whose context Ackpoint was deployed has been undeployed (its context is closed) since. */
  private static boolean hostUndeployed(Vertx vertx, ContextInternal host) {
    return host != null && host.owner() == vertx && host.isDeployment() && host.closeFuture().isClosed();
  }

  /** {@code cause}: how the start failed when the verticle went (Vert.x's own words, an interrupt), or null. */
  private static HostUndeployed undeployedWhileStarting(ContextInternal host, Throwable cause) {
    return new HostUndeployed("the verticle that deployed Ackpoint (deployment " + host.deploymentID() + ") was"
        + " undeployed while Ackpoint started, and Ackpoint's verticles with it: Ackpoint was closed", cause);
  }

  private static final class HostUndeployed extends IllegalStateException {

    HostUndeployed(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * The close hook of a deploy in progress. Vert.x runs its close hooks before it closes its thread
   * pools, and waits for them: closing it while the embedded PostgreSQL starts (on a worker thread)
   * waits for the start, cuts the deploy short there, and has it stop the server again; without this
   * the server outlived the Vert.x and its data directory stayed claimed for the process's life.
   */
  private static final class Starting implements Closeable {

    private final VertxInternal vertx;
    private final Promise<Ackpoint> ended = Promise.promise();
    private volatile boolean vertxClosing;

    Starting(Vertx vertx) {
      this.vertx = (VertxInternal) vertx;
      this.vertx.addCloseHook(this);
    }

    @Override
    public void close(Completable<Void> completion) {
      vertxClosing = true;
      // Deployed meanwhile: its own hook was refused (the Vert.x was closing already), so it is closed here.
      ended.future().transform(ar -> ar.succeeded() ? ar.result().close() : Future.<Void>succeededFuture())
          .onComplete(completion);
    }

    Future<Void> unlessVertxClosing() {
      return vertxClosing ? Future.failedFuture(new IllegalStateException("the Vert.x was closed while Ackpoint started"))
          : Future.succeededFuture();
    }

    /** Once deployed, the Ackpoint's own hook has taken over; a failed deploy has left nothing running. */
    void ended(AsyncResult<Ackpoint> deploy) {
      vertx.removeCloseHook(this);
      ended.handle(deploy);
    }
  }

  /**
   * A clustered Vert.x makes Ackpoint a node of a cluster, whatever {@code cluster.enabled} says
   * (several Ackpoints on one event bus must elect one follower); nodes share their databases.
   */
  private static String clusterProblem(Vertx vertx, AckpointConfig config) {
    if (vertx.isClustered() && config.needsEmbeddedDatabase()) {
      return "this Vert.x is clustered, which makes Ackpoint a node of a cluster, and cluster mode needs external"
          + " databases: source.type or storage.type is embedded";
    }
    if (config.cluster().enabled() && !vertx.isClustered()) {
      return "is true, but this Vert.x is not clustered: build it with a cluster manager"
          + " (Vertx.builder().withClusterManager(...).buildClustered()), as the runnable service does";
    }
    return null;
  }

  private static AckpointImpl create(Vertx vertx, AckpointConfig config, MeterRegistry given, EmbeddedDatabase embedded,
                                     VertxClaims claims) {
    Databases databases = Databases.open(vertx, config);
    MeterRegistry registry = given != null ? given : ownRegistry();
    ReplicationSource source = Backends.source(config, databases);
    AckpointMetrics metrics = new AckpointMetrics(registry, source.positions());
    HttpQueues queues = HttpQueues.of(config.http());
    metrics.queues(queues.all());
    Supplier<String> metricsText = registry instanceof PrometheusMeterRegistry prometheus ? prometheus::scrape : null;
    Supplier<String> livenessProblem = () -> embedded == null || embedded.isRunning() ? null
        : "the embedded PostgreSQL has stopped; only a restart of Ackpoint starts it again";
    HttpSettings http = new HttpSettings(config, new AckpointAddresses(config.eventBusPrefix()), queues,
        ConnectionLimit.of(config.http().maxConnections(), metrics),
        JwtAuthenticator.factory(config.auth(), metrics), metrics, metricsText, livenessProblem);
    return new AckpointImpl(vertx, config, metrics, http, embedded, databases, Backends.storage(config, databases),
        Backends.history(config, databases), source, claims);
  }

  /**
   * Ackpoint's own registry, when the application gives none. JVM, pool and event-bus metrics come
   * from the Vert.x instance's own metrics (vertx-micrometer-metrics), which the runnable service
   * turns on with the same registry; an embedding application decides that for its Vert.x.
   */
  private static MeterRegistry ownRegistry() {
    return new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  }

  /**
   * The batcher and the acknowledgement verticle first, then the leader's duties (the engine and what
   * feeds it: the intake of external progress, the follower): on a standalone Ackpoint at once; in a
   * cluster on the node that wins the follower lock, through {@link Leadership}, deployed last so
   * that it is undeployed first and hands over at once.
   */
  private Future<Void> deployVerticles() {
    AckpointAddresses addresses = http.addresses();
    boolean clustered = vertx.isClustered();
    NodeRole role = clustered ? new NodeRole() : NodeRole.standalone();
    List<Supplier<Deployable>> duties = leaderDuties(addresses);
    Future<Void> chain = deploy(new BatcherVerticle(source, storage, Backends.oneRoundTrip(databases, storage, source), config.batching(),
        config.checkpoints().mode(), metrics, addresses))
        .compose(v -> deploy(new AckVerticle(storage, history, source, config.acknowledgement(), addresses)));
    if (!clustered) {
      for (Supplier<Deployable> duty : duties) {
        chain = chain.compose(v -> deploy(duty.get()));
      }
    }
    chain = chain.compose(v -> deploy(new CompactionVerticle(storage, config.checkpoints(), config.compaction(), metrics,
        addresses.compactionRun())));
    if (http.metricsText() != null && config.metricsPort() > 0) {
      chain = chain.compose(v -> deploy(new MetricsVerticle(config.http().host(), config.metricsPort(), http.metricsText(),
          config.http().idleTimeout())));
    }
    if (config.http().enabled()) {
      int instances = config.http().instances() > 0 ? config.http().instances() : eventLoops(config);
      int port = config.http().port() == 0 ? -RANDOM_PORTS.incrementAndGet() : config.http().port();
      chain = chain.compose(v -> vertx.deployVerticle(() -> {
            HttpVerticle server = new HttpVerticle(http, port);
            servers.add(server);
            return server;
          }, new DeploymentOptions().setInstances(instances))
          .map(id -> {
            deployments.add(new Deployed(id, HttpVerticle.class.getSimpleName()));
            return null;
          }));
    }
    String slot = config.replication().slotName();
    chain = chain.compose(v -> deploy(new NodeStatusVerticle(addresses, role, slot, config.replication().follower(),
        Backends.slotState(source, slot))));
    if (clustered) {
      // A leader whose follower cannot reach the source hands over (Leadership). Without the built-in
      // follower, progress comes from another verticle to whichever node leads: a handover brings none.
      Duration handover = config.replication().follower() ? config.cluster().failoverTimeout() : null;
      chain = chain.compose(v -> deploy(new Leadership(Leadership.lockName(addresses, slot), slot, addresses, duties, role,
          recheckInterval(config), handover)));
    }
    return chain;
  }

  /** What the node that follows replication runs, made anew for each term of leadership. */
  private List<Supplier<Deployable>> leaderDuties(AckpointAddresses addresses) {
    List<Supplier<Deployable>> duties = new ArrayList<>();
    duties.add(() -> new AckEngineVerticle(storage, source.positions(), metrics, addresses));
    duties.add(() -> new ExternalProgressVerticle(source, config.replication(), metrics, addresses));
    if (config.replication().follower()) {
      duties.add(() -> Backends.follower(vertx, config, source, addresses, metrics));
    }
    return duties;
  }

  /** How often a leader checks that it is the one recorded: well within the failover bound. */
  private static Duration recheckInterval(AckpointConfig config) {
    long half = config.cluster().failoverTimeout().toMillis() / 2;
    return Duration.ofMillis(Math.max(1_000, Math.min(half, 5_000)));
  }

  private Future<Void> deploy(Deployable verticle) {
    return vertx.deployVerticle(verticle).map(id -> {
      deployments.add(new Deployed(id, verticle.getClass().getSimpleName()));
      return null;
    });
  }

  /** A deployment of this Ackpoint's, named for the logs of its close. */
  private record Deployed(String id, String name) {
  }

  /** One HTTP verticle per event loop. */
  public static int eventLoops(AckpointConfig config) {
    return config.http().eventLoops() > 0 ? config.http().eventLoops() : Runtime.getRuntime().availableProcessors();
  }

  /** Starting it blocks (it runs initdb and waits for the server), so it runs on a worker thread. */
  private static Future<EmbeddedDatabase> startEmbedded(Vertx vertx, AckpointConfig config) {
    return config.needsEmbeddedDatabase()
        ? vertx.executeBlocking(() -> EmbeddedDatabase.start(config.embedded()))
        : Future.succeededFuture();
  }

  private static Future<Void> stopEmbedded(Vertx vertx, EmbeddedDatabase embedded) {
    return embedded == null ? Future.succeededFuture() : vertx.executeBlocking(() -> {
      embedded.close();
      return null;
    });
  }

  @Override
  public Future<Router> createRouter() {
    if (DevelopmentKey.kidIn(config.auth().jwks()).isPresent()) {
      // Ackpoint cannot tell which address the host listens on, so the published key is never trusted here.
      return Future.failedFuture(new IllegalStateException("auth.jwks holds the published development key, which is"
          + " trusted only on Ackpoint's own loopback listener: configure your own keys to mount Ackpoint's routes"));
    }
    if (closing != null) {
      return Future.failedFuture(new IllegalStateException("this Ackpoint is closed"));
    }
    Context context = vertx.getOrCreateContext();
    return HttpApi.create(vertx, http).compose(api -> {
      // Made while close() ran (keys fetched from auth.jwks_uri take a moment): closed at once.
      synchronized (this) {
        if (closing == null) {
          mounted.add(new MountedApi(context, api));
          return Future.succeededFuture(api.router());
        }
      }
      return api.close().transform(ignored -> Future.failedFuture(new IllegalStateException("this Ackpoint is closed")));
    });
  }

  /** A router made by {@link #createRouter}, and the event loop it is served on, where it is closed. */
  private record MountedApi(Context context, HttpApi api) {

    Future<Void> close() {
      Promise<Void> closed = Promise.promise();
      context.runOnContext(v -> {
        api.endWaits();
        api.close().onComplete(closed);
      });
      return closed.future();
    }
  }

  @Override
  public int httpPort() {
    return servers.isEmpty() ? 0 : servers.get(0).actualPort();
  }

  @Override
  public AckpointAddresses addresses() {
    return http.addresses();
  }

  @Override
  public MeterRegistry meterRegistry() {
    return metrics.registry();
  }

  /**
   * Undeploys in the reverse order of deployment: HTTP first (no new requests; routers mounted by
   * the host answer 503 from then on), then the batcher, which lets its in-flight batches finish; the
   * pools and the embedded database go last. A verticle that deployed Ackpoint takes Ackpoint's
   * verticles with it when it is undeployed: those are gone. Every step runs whatever the one before
   * did; the first failure is the answer. Closed once: a second call answers the first's result.
   */
  @Override
  public synchronized Future<Void> close() {
    if (closing == null) {
      ((VertxInternal) vertx).removeCloseHook(closeHook);
      closing = closeOnce();
    }
    return closing;
  }

  private Future<Void> closeOnce() {
    List<CloseStep> steps = new ArrayList<>();
    mounted.forEach(api -> steps.add(new CloseStep("a router mounted by the host", api::close)));
    for (int i = deployments.size() - 1; i >= 0; i--) {
      Deployed deployed = deployments.get(i);
      steps.add(new CloseStep("the undeploy of " + deployed.name(),
          () -> vertx.deploymentIDs().contains(deployed.id()) ? vertx.undeploy(deployed.id()) : Future.succeededFuture()));
    }
    steps.add(new CloseStep("the close of the database clients", databases::close));
    steps.add(new CloseStep("the stop of the embedded PostgreSQL", () -> stopEmbedded(vertx, embedded)));
    steps.add(new CloseStep("the close of the metrics", () -> {
      metrics.close();
      return Future.succeededFuture();
    }));
    Duration slow = config.batching().requestTimeout().plus(SLOW_CLOSE_MARGIN);
    Future<Void> chain = Future.succeededFuture();
    for (CloseStep step : steps) {
      chain = chain.transform(before -> step.run(slow).transform(after -> firstFailure(before, after)));
    }
    return chain.onComplete(ar -> {
      deployments.clear();
      claims.release();
    });
  }

  /**
   * One step of {@link #close()}, failed, saying which, once it takes longer than {@code slow}: every
   * step is bounded by the timeouts of what it closes (a batch's request timeout, a pool's wait for
   * the server to hang up), so one that outlasts them waits for something that will not come (a
   * pool's close that a Vert.x defect left incomplete for good), and the steps after it run all the
   * same: the embedded PostgreSQL is stopped and the close answers.
   */
  private record CloseStep(String name, Supplier<Future<Void>> action) {

    Future<Void> run(Duration slow) {
      // A step that throws fails as one that answers a failure.
      return Future.<Void>future(step -> action.get().onComplete(step))
          .timeout(slow.toMillis(), TimeUnit.MILLISECONDS)
          .recover(e -> {
            if (!(e instanceof TimeoutException)) {
              return Future.failedFuture(e);
            }
            String message = "closing Ackpoint: " + name + " has not completed after " + slow.toSeconds() + " s";
            LOG.warn("{}; the close goes on without it", message);
            return Future.failedFuture(new IllegalStateException(message));
          });
    }
  }

  private static Future<Void> firstFailure(AsyncResult<Void> before, AsyncResult<Void> after) {
    AsyncResult<Void> failed = before.failed() ? before : after;
    return failed.failed() ? Future.failedFuture(failed.cause()) : Future.succeededFuture();
  }
}
