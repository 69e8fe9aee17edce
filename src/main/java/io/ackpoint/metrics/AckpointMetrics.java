package io.ackpoint.metrics;

import io.ackpoint.ack.AckListener;
import io.ackpoint.auth.JwksListener;
import io.ackpoint.batch.BatchListener;
import io.ackpoint.compaction.CompactionListener;
import io.ackpoint.core.PositionFormat;
import io.ackpoint.http.HttpListener;
import io.ackpoint.http.RequestQueue;
import io.ackpoint.source.ReplicationListener;
import io.ackpoint.source.SlotState;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The metrics of one Ackpoint (SPEC section 8), in the registry it is given. It observes each
 * capability through the listener that capability owns. Thread-safe: every verticle records into it.
 */
public final class AckpointMetrics implements BatchListener, AckListener, HttpListener, CompactionListener, JwksListener,
    ReplicationListener {

  /** The open Ackpoints' metrics by registry; guarded by itself. */
  private static final Map<MeterRegistry, Set<AckpointMetrics>> OPEN = new WeakHashMap<>();

  private final MeterRegistry registry;
  private final PositionFormat positions;
  private final AtomicInteger batchesInFlight = new AtomicInteger();
  private final AtomicInteger openStreams = new AtomicInteger();
  private final AtomicInteger openConnections = new AtomicInteger();
  private final Counter refusedConnections;
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
  private final Timer acknowledgementLatency;
  private final Counter progressRejected;
  private final Counter jwksFetchFailures;
  private final AtomicLong lastHead = new AtomicLong();
  private final AtomicInteger followerUp = new AtomicInteger();
  private final AtomicLong slotRetained = new AtomicLong();
  private final AtomicLong lastApplied = new AtomicLong();
  /** The positions stored batches wait for, with the time they were stored; bounded; guarded by itself. */
  private final TreeMap<Long, Long> storedAt = new TreeMap<>();
  private final Map<String, Timer> requestTimers = new ConcurrentHashMap<>();
  /** Every meter this Ackpoint registered, removed when it closes: a host's registry outlives it. */
  private final List<Meter> meters = new CopyOnWriteArrayList<>();
  private volatile boolean closed;

  public AckpointMetrics(MeterRegistry registry, PositionFormat positions) {
    this.registry = registry;
    this.positions = positions;
    synchronized (OPEN) {
      OPEN.computeIfAbsent(registry, r -> new HashSet<>()).add(this);
    }
    batchRequests = track(DistributionSummary.builder("ackpoint.batch.requests").description("requests per batch").register(registry));
    batchUsers = track(DistributionSummary.builder("ackpoint.batch.users").description("full user ids (storage rows) per batch").register(registry));
    batchesOk = track(Counter.builder("ackpoint.batches").tag("outcome", "ok").register(registry));
    batchesFailed = track(Counter.builder("ackpoint.batches").tag("outcome", "failed").register(registry));
    batchDuration = track(Timer.builder("ackpoint.batch.duration").publishPercentileHistogram().register(registry));
    headRead = track(Timer.builder("ackpoint.source.head.read").register(registry));
    storageWrite = track(Timer.builder("ackpoint.storage.write").register(registry));
    marker = track(Timer.builder("ackpoint.source.marker").register(registry));
    acknowledgementApply = track(Timer.builder("ackpoint.acknowledgement.apply").description("one acknowledgement statement").register(registry));
    acknowledgementLatency = track(Timer.builder("ackpoint.acknowledgement.latency")
        .description("from a batch stored to its checkpoints acknowledged").publishPercentileHistogram().register(registry));
    acknowledged = track(Counter.builder("ackpoint.acknowledged").description("checkpoints acknowledged").register(registry));
    progressRejected = track(Counter.builder("ackpoint.replication.progress.rejected")
        .description("progress messages from other verticles rejected as malformed or beyond the source's head").register(registry));
    jwksFetchFailures = track(Counter.builder("ackpoint.jwks.fetch.failures").description("failed fetches of auth.jwks_uri").register(registry));
    track(Gauge.builder("ackpoint.batches.in.flight", batchesInFlight, AtomicInteger::get).register(registry));
    track(Gauge.builder("ackpoint.replication.follower.up", followerUp, AtomicInteger::get)
        .description("1 while the replication follower follows its slot").register(registry));
    track(Gauge.builder("ackpoint.replication.slot.retained", slotRetained, AtomicLong::get).baseUnit("bytes")
        .description("WAL the replication slot holds back on the source").register(registry));
    track(Gauge.builder("ackpoint.streams.open", openStreams, AtomicInteger::get).register(registry));
    track(Gauge.builder("ackpoint.http.connections.open", openConnections, AtomicInteger::get)
        .description("connections open on Ackpoint's own HTTP port").register(registry));
    refusedConnections = track(Counter.builder("ackpoint.http.connections.refused")
        .description("connections closed as soon as accepted because http.max_connections were open").register(registry));
    track(FunctionCounter.builder("ackpoint.compaction.deleted", compactionDeletions, AtomicLong::get).register(registry));
    // How far replication trails the newest head Ackpoint read, in the source's unit (bytes of WAL).
    track(Gauge.builder("ackpoint.replication.lag.bytes", () -> Math.max(0, lastHead.get() - lastApplied.get()))
        .baseUnit("bytes").register(registry));
  }

  public MeterRegistry registry() {
    return registry;
  }

  @Override
  public void batchStarted(int requests, int users) {
    batchesInFlight.incrementAndGet();
    batchRequests.record(requests);
    batchUsers.record(users);
  }

  @Override
  public void headRead(String head, long nanos) {
    headRead.record(nanos, TimeUnit.NANOSECONDS);
    lastHead.accumulateAndGet(positions.ordinal(head), Math::max);
  }

  @Override
  public void stored(String head, long nanos) {
    storageWrite.record(nanos, TimeUnit.NANOSECONDS);
    // A head read inside the storage statement (source and storage one database) is seen only here.
    lastHead.accumulateAndGet(positions.ordinal(head), Math::max);
  }

  @Override
  public void acknowledgedAt(String marker) {
    long ordinal = positions.ordinal(marker);
    synchronized (storedAt) {
      // The marker is committed with the batch, so the follower can apply it before this callback
      // runs: the batch then waited for nothing after it was stored (or for the statement that
      // records what the position's own statement missed: see BatchListener#acknowledgedAt).
      if (ordinal <= lastApplied.get()) {
        acknowledgementLatency.record(0, TimeUnit.NANOSECONDS);
      } else {
        await(ordinal);
      }
    }
  }

  @Override
  public void acknowledgedAlready() {
    acknowledgementLatency.record(0, TimeUnit.NANOSECONDS);
  }

  @Override
  public void pendingSince(String head) {
    synchronized (storedAt) {
      // A position applied already may precede the batch's commit: only a later one counts.
      await(Math.max(positions.ordinal(head), lastApplied.get() + 1));
    }
  }

  /** Called holding the lock of {@code storedAt}. */
  private void await(long ordinal) {
    storedAt.putIfAbsent(ordinal, System.nanoTime());
    if (storedAt.size() > 100_000) {
      storedAt.pollFirstEntry(); // nothing acknowledges any more: keep memory bounded
    }
  }

  @Override
  public void markerForced(long nanos) {
    marker.record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void batchFinished(long nanos, boolean succeeded) {
    batchesInFlight.decrementAndGet();
    (succeeded ? batchesOk : batchesFailed).increment();
    batchDuration.record(nanos, TimeUnit.NANOSECONDS);
  }

  /** Records how long the batches waiting for {@code position} or an earlier one waited. */
  @Override
  public void positionApplied(String position, long nanos, int checkpoints) {
    acknowledgementApply.record(nanos, TimeUnit.NANOSECONDS);
    acknowledged.increment(checkpoints);
    long ordinal = positions.ordinal(position);
    // Atomic with acknowledgedAt(): a marker is either waiting in storedAt or already passed, never neither.
    synchronized (storedAt) {
      long now = System.nanoTime();
      lastApplied.accumulateAndGet(ordinal, Math::max);
      var passed = storedAt.headMap(ordinal, true);
      for (Long stored : passed.values()) {
        acknowledgementLatency.record(now - stored, TimeUnit.NANOSECONDS);
      }
      passed.clear();
    }
  }

  @Override
  public void progressRejected() {
    progressRejected.increment();
  }

  /** Requests refused (429), running and waiting, per route group, read from the queues themselves. */
  @Override
  public void queues(List<RequestQueue> queues) {
    for (RequestQueue queue : queues) {
      track(FunctionCounter.builder("ackpoint.http.rejected", queue, RequestQueue::rejected).tag("group", queue.name()).register(registry));
      track(Gauge.builder("ackpoint.http.running", queue, RequestQueue::running).tag("group", queue.name()).register(registry));
      track(Gauge.builder("ackpoint.http.waiting", queue, RequestQueue::waiting).tag("group", queue.name()).register(registry));
    }
  }

  @Override
  public void request(String route, int status, long nanos) {
    if (closed) {
      // A router mounted by a host answers after close (503): no new meter outlives this Ackpoint.
      return;
    }
    // With histogram buckets, so that a p99 per route can be computed from the scrape.
    requestTimers.computeIfAbsent(route + ' ' + status, k -> track(Timer.builder("ackpoint.http.requests")
        .tag("route", route).tag("status", Integer.toString(status))
        .publishPercentileHistogram()
        .register(registry))).record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void connectionOpened() {
    openConnections.incrementAndGet();
  }

  @Override
  public void connectionClosed() {
    openConnections.decrementAndGet();
  }

  @Override
  public void connectionRefused() {
    refusedConnections.increment();
  }

  @Override
  public void streamOpened() {
    openStreams.incrementAndGet();
  }

  @Override
  public void streamClosed() {
    openStreams.decrementAndGet();
  }

  @Override
  public void compacted(long deleted) {
    compactionDeletions.addAndGet(deleted);
  }

  @Override
  public void followerUp(boolean up) {
    followerUp.set(up ? 1 : 0);
  }

  @Override
  public void slotState(SlotState state) {
    slotRetained.set(state.retainedBytes());
  }

  @Override
  public void jwksFetchFailed() {
    jwksFetchFailures.increment();
  }

  private <M extends Meter> M track(M meter) {
    meters.add(meter);
    return meter;
  }

  /**
   * Takes this Ackpoint's meters out of the registry: gauges would keep reading the state of a closed
   * Ackpoint, and one deployed after it on the same registry would find its own ignored. A meter that
   * another open Ackpoint on the registry uses too (the same name and tags: Micrometer hands both the
   * one meter) stays. Nothing is registered after this.
   */
  public void close() {
    synchronized (OPEN) {
      closed = true;
      Set<AckpointMetrics> open = OPEN.computeIfAbsent(registry, r -> new HashSet<>());
      open.remove(this);
      Set<Meter.Id> shared = new HashSet<>();
      open.forEach(other -> other.meters.forEach(m -> shared.add(m.getId())));
      meters.stream().filter(m -> !shared.contains(m.getId())).forEach(registry::remove);
      meters.clear();
    }
  }
}
