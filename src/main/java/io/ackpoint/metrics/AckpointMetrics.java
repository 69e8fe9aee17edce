package io.ackpoint.metrics;

import io.ackpoint.auth.JwksListener;
import io.ackpoint.batch.CheckpointBatcher;
import io.ackpoint.http.HttpQueues;
import io.ackpoint.http.RequestQueue;
import io.ackpoint.source.Lsn;
import io.ackpoint.storage.CheckpointWriter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The metrics of one Ackpoint (SPEC section 8), in a Prometheus registry served on {@code /metrics}.
 * Thread-safe: every verticle records into it.
 */
public final class AckpointMetrics implements CheckpointBatcher.BatchListener, JwksListener {

  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final AtomicInteger batchesInFlight = new AtomicInteger();
  private final AtomicInteger openStreams = new AtomicInteger();
  private final AtomicLong compactionDeletions = new AtomicLong();
  private final DistributionSummary batchRequests;
  private final DistributionSummary batchUsers;
  private final Counter batchesOk;
  private final Counter batchesFailed;
  private final Timer batchDuration;
  private final Timer headRead;
  private final Timer storageWrite;
  private final Timer marker;
  private final Timer acknowledgementApply;
  private final Counter acknowledged;
  private final Counter jwksFetchFailures;
  private final AtomicLong lastHead = new AtomicLong();
  /** Heads of stored batches not yet acknowledged, with the time they were stored; bounded. */
  private final ConcurrentSkipListMap<Long, Long> storedAt = new ConcurrentSkipListMap<>();
  private final Timer acknowledgementLatency;
  private final AtomicLong lastApplied = new AtomicLong();
  private final Map<String, Timer> requestTimers = new ConcurrentHashMap<>();
  private final Counter progressRejected;

  public AckpointMetrics() {
    new JvmMemoryMetrics().bindTo(registry);
    new JvmGcMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    batchRequests = DistributionSummary.builder("ackpoint.batch.requests").description("requests per batch").register(registry);
    batchUsers = DistributionSummary.builder("ackpoint.batch.users").description("full user ids (storage rows) per batch").register(registry);
    batchesOk = Counter.builder("ackpoint.batches").tag("outcome", "ok").register(registry);
    batchesFailed = Counter.builder("ackpoint.batches").tag("outcome", "failed").register(registry);
    batchDuration = Timer.builder("ackpoint.batch.duration").publishPercentileHistogram().register(registry);
    headRead = Timer.builder("ackpoint.source.head.read").register(registry);
    storageWrite = Timer.builder("ackpoint.storage.write").register(registry);
    marker = Timer.builder("ackpoint.source.marker").register(registry);
    acknowledgementApply = Timer.builder("ackpoint.acknowledgement.apply").description("one acknowledgement statement").register(registry);
    acknowledgementLatency = Timer.builder("ackpoint.acknowledgement.latency")
        .description("from a batch stored to its checkpoints acknowledged").publishPercentileHistogram().register(registry);
    acknowledged = Counter.builder("ackpoint.acknowledged").description("checkpoints acknowledged").register(registry);
    progressRejected = Counter.builder("ackpoint.replication.progress.rejected")
        .description("progress messages from other verticles rejected as malformed or beyond the source's head").register(registry);
    jwksFetchFailures = Counter.builder("ackpoint.jwks.fetch.failures").description("failed fetches of auth.jwks_uri").register(registry);
    Gauge.builder("ackpoint.batches.in.flight", batchesInFlight, AtomicInteger::get).register(registry);
    Gauge.builder("ackpoint.streams.open", openStreams, AtomicInteger::get).register(registry);
    FunctionCounter.builder("ackpoint.compaction.deleted", compactionDeletions, AtomicLong::get).register(registry);
    // How far replication trails the newest head Ackpoint read: bytes of WAL not yet observed.
    Gauge.builder("ackpoint.replication.lag.bytes", () -> Math.max(0, lastHead.get() - lastApplied.get()))
        .baseUnit("bytes").register(registry);
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  public String scrape() {
    return registry.scrape();
  }

  @Override
  public void batchStarted(int requests, int users) {
    batchesInFlight.incrementAndGet();
    batchRequests.record(requests);
    batchUsers.record(users);
  }

  @Override
  public void batchFinished(long nanos, boolean succeeded) {
    batchesInFlight.decrementAndGet();
    (succeeded ? batchesOk : batchesFailed).increment();
    batchDuration.record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void jwksFetchFailed() {
    jwksFetchFailures.increment();
  }

  public void request(String route, int status, long nanos) {
    requestTimers.computeIfAbsent(route + ' ' + status, k -> Timer.builder("ackpoint.http.requests")
        .tag("route", route).tag("status", Integer.toString(status))
        .register(registry)).record(nanos, TimeUnit.NANOSECONDS);
  }

  /** Requests refused (429), running and waiting, per route group, read from the queues themselves. */
  public void bind(HttpQueues queues) {
    for (RequestQueue queue : List.of(queues.checkpointing(), queues.stream(), queues.api())) {
      FunctionCounter.builder("ackpoint.http.rejected", queue, RequestQueue::rejected).tag("group", queue.name()).register(registry);
      Gauge.builder("ackpoint.http.running", queue, RequestQueue::running).tag("group", queue.name()).register(registry);
      Gauge.builder("ackpoint.http.waiting", queue, RequestQueue::waiting).tag("group", queue.name()).register(registry);
    }
  }

  public Timer headRead() {
    return headRead;
  }

  public Timer storageWrite() {
    return storageWrite;
  }

  public Timer marker() {
    return marker;
  }

  public void acknowledgementApplied(Duration took, int checkpoints) {
    acknowledgementApply.record(took);
    acknowledged.increment(checkpoints);
  }

  public void progressRejected() {
    progressRejected.increment();
  }

  public AtomicInteger openStreams() {
    return openStreams;
  }

  public AtomicLong compactionDeletions() {
    return compactionDeletions;
  }

  /** The newest head read from the source. */
  public void recordHead(String head) {
    lastHead.accumulateAndGet(Lsn.parse(head), Math::max);
  }

  /** The newest position whose checkpoints are acknowledged: records how long its batches waited. */
  public void positionApplied(String position) {
    if (position.indexOf('/') < 0) {
      return;
    }
    long lsn = Lsn.parse(position);
    lastApplied.accumulateAndGet(lsn, Math::max);
    long now = System.nanoTime();
    var passed = storedAt.headMap(lsn, true);
    for (Long stored : passed.values()) {
      acknowledgementLatency.record(now - stored, TimeUnit.NANOSECONDS);
    }
    passed.clear();
  }

  private void batchStored(String head) {
    storedAt.putIfAbsent(Lsn.parse(head), System.nanoTime());
    if (storedAt.size() > 100_000) {
      storedAt.pollFirstEntry(); // nothing acknowledges any more: keep memory bounded
    }
  }

  public CheckpointWriter timed(CheckpointWriter writer) {
    return (head, writes) -> TimedReplicationSource.timed(storageWrite, writer.store(head, writes))
        .onSuccess(stored -> batchStored(head));
  }
}
