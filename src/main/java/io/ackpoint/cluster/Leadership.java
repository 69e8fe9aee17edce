package io.ackpoint.cluster;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.config.ConfigException;
import io.ackpoint.core.ReplicationStatus;
import io.vertx.core.Deployable;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.Lock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Which node of a cluster follows replication: the one that holds the slot's follower lock. It
 * deploys the leader's duties (the follower, the intake of external progress) and undeploys them
 * when it stops, then releases the lock at once, so that a node stopped with SIGTERM hands over
 * without waiting for failure detection. Every other node keeps asking for the lock; Hazelcast
 * releases it when its holder leaves the cluster, so one of them takes over once the holder dies.
 *
 * <p>Two nodes may both believe they hold the lock after a split cluster merged. The slot fences
 * them (one walsender per slot: the second follower gets "slot in use" and keeps retrying), and the
 * holder record settles it: a node that finds another one recorded steps down without releasing
 * (what it held was the other side's lock, gone with the merge) and asks again.
 *
 * <p>A holder stays a member while only its route to the source is lost, and Hazelcast then never
 * frees its lock: a leader whose follower has been cut off from the source
 * ({@link ReplicationStatus#cutOff}) for a whole {@code handover} (the cluster's failover timeout)
 * hands the lock over if another node is there to take it, and asks for it again only after as long,
 * so that a node that reaches the source follows. Where none does (the
 * source is down), the lock goes round the nodes at that pace, none of them ready, until one reaches
 * it.
 */
public final class Leadership extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(Leadership.class);
  /** How long one request for the lock waits (on a worker thread); a freed lock is granted at once. */
  private static final long CAMPAIGN_WAIT_MS = 2_000;
  private static final long RETRY_MS = 1_000;

  private final String lockName;
  private final String slot;
  private final AckpointAddresses addresses;
  private final List<Supplier<Deployable>> duties;
  private final NodeRole role;
  private final Duration recheck;
  /** How long a leader keeps the lock while its follower is cut off from the source; null: for ever. */
  private final Duration handover;
  /** When this leader's follower was first seen cut off, in the spell that goes on; -1: it is not. */
  private long cutOffSince = -1;
  private final List<String> deployed = new ArrayList<>();
  /** Nodes on another slot already logged, so that each is told once. */
  private final Set<String> misconfigured = new HashSet<>();
  private ClusterNode node;
  private FollowerLock lock;
  private ReplicationHealthRelay relay;
  private Lock held;
  private long recheckTimer = -1;
  private boolean stopped;

  /**
   * {@code duties}: made anew for every term; {@code recheck}: how often a leader compares the holder
   * record with itself and asks its follower whether it follows ({@code healthReplication});
   * {@code handover}: see the class.
   */
  public Leadership(String lockName, String slot, AckpointAddresses addresses, List<Supplier<Deployable>> duties,
                    NodeRole role, Duration recheck, Duration handover) {
    this.lockName = lockName;
    this.slot = slot;
    this.addresses = addresses;
    this.duties = List.copyOf(duties);
    this.role = role;
    this.recheck = recheck;
    this.handover = handover;
  }

  /** The lock of one slot of one Ackpoint deployment: its event-bus prefix and slot name. */
  public static String lockName(AckpointAddresses addresses, String slot) {
    return addresses.prefix() + ".follower." + slot;
  }

  /**
   * Asks for the lock once without waiting: the node that gets it has deployed its duties when this
   * completes (and fails if they cannot be deployed, as a standalone Ackpoint would); the others
   * keep asking in the background.
   */
  @Override
  public Future<?> start() {
    node = ClusterNode.of(vertx);
    lock = new FollowerLock(vertx, lockName, node.id());
    relay = new ReplicationHealthRelay(vertx.eventBus(), addresses, node.id(), slot, lock);
    return otherSlotsFollowed().compose(others -> {
      if (!others.isEmpty()) {
        return Future.failedFuture(new ConfigException("replication.slot_name", "this node has " + slot + ", but " + others.get(0)
            + " in this cluster (eventbus.prefix " + addresses.prefix() + "): every node of a deployment needs the same one"));
      }
      return relay.follow();
    }).compose(v -> lock.acquire(0).transform(ar -> {
      if (ar.failed()) {
        LOG.info("node {} stands by: another node follows replication slot {}", node.id(), slot);
        campaign();
        return Future.succeededFuture();
      }
      return lead(ar.result());
    }));
  }

  /**
   * Nodes of one deployment follow one slot. A node configured with another slot would lead that
   * slot as well, splitting the acknowledgements between two followers, and the slot would hold WAL
   * back on the source for good once that node is gone. Such a node is found by its record: a live
   * member recorded as the holder of another slot's lock under this deployment's prefix. Answers
   * one line per such slot.
   */
  private Future<List<String>> otherSlotsFollowed() {
    String ours = lockName(addresses, "");
    return lock.all().recover(e -> {
      // A check, not a condition of following: a cluster that cannot read its map now leads as before.
      LOG.warn("could not read the follower records to check replication.slot_name: {}", e.getMessage());
      return Future.succeededFuture(Map.of());
    }).map(records -> {
      List<String> members = node.memberIds();
      List<String> others = new ArrayList<>();
      records.forEach((name, holder) -> {
        String other = name.startsWith(ours) ? name.substring(ours.length()) : null;
        // Slot names hold no '.': a longer name is another prefix's that begins with this one ("p.follower").
        if (other != null && !other.equals(slot) && !other.contains(".") && members.contains(holder)) {
          others.add("node " + holder + " follows replication slot " + other);
        }
      });
      return others;
    });
  }

  private void campaign() {
    if (stopped) {
      return;
    }
    long asked = System.nanoTime();
    lock.acquire(CAMPAIGN_WAIT_MS).onComplete(ar -> {
      if (stopped) {
        if (ar.succeeded()) {
          ar.result().release();
        }
      } else if (ar.succeeded()) {
        lead(ar.result()).onFailure(e -> vertx.setTimer(RETRY_MS, id -> campaign()));
      } else if (System.nanoTime() - asked >= CAMPAIGN_WAIT_MS * 1_000_000 / 2) {
        // The lock stayed taken for the whole wait: ask again at once, so a freed lock is taken at once.
        campaign();
      } else {
        // Failed without waiting (the cluster is not answering): not a busy loop.
        LOG.warn("could not ask for the follower lock {}: {}", lockName, ar.cause().getMessage());
        vertx.setTimer(RETRY_MS, id -> campaign());
      }
    });
  }

  /** Holds the lock: records itself, answers for replication's readiness and deploys the duties. */
  private Future<Void> lead(Lock acquired) {
    held = acquired;
    cutOffSince = -1;
    role.leading(true);
    LOG.info("node {} holds the follower lock of replication slot {}: following replication", node.id(), slot);
    return lock.claim()
        .compose(v -> relay.lead())
        .compose(v -> deployDuties())
        .onSuccess(v -> recheckTimer = vertx.setPeriodic(recheck.toMillis(), id -> recheck()))
        .recover(e -> {
          LOG.warn("node {} could not start following replication slot {}: {}", node.id(), slot, e.getMessage());
          return stepDown(true).transform(ignored -> Future.failedFuture(e));
        });
  }

  private Future<Void> deployDuties() {
    Future<Void> chain = Future.succeededFuture();
    for (Supplier<Deployable> duty : duties) {
      chain = chain.compose(v -> vertx.deployVerticle(duty.get()).map(id -> {
        deployed.add(id);
        return null;
      }));
    }
    return chain;
  }

  private void recheck() {
    if (handover != null) {
      checkFollower();
    }
    otherSlotsFollowed().onSuccess(others -> {
      // Two nodes that started at the same moment may both have found no other slot recorded.
      for (String other : others) {
        if (misconfigured.add(other)) {
          LOG.error("{}, this node {} follows {}: every node of a deployment needs the same replication.slot_name", other,
              node.id(), slot);
        }
      }
    });
    lock.holder().onComplete(ar -> {
      if (stopped || held == null) {
        return;
      }
      if (ar.failed()) {
        LOG.debug("could not read the holder of {}: {}", lockName, ar.cause().getMessage());
      } else if (ar.result() == null) {
        lock.claim();
      } else if (!ar.result().equals(node.id())) {
        LOG.warn("node {} is recorded as the follower of replication slot {} (a split cluster merged): node {}"
            + " steps down", ar.result(), slot, node.id());
        // What this node held was its side's lock, gone with the merge: there is nothing to release.
        stepDown(false).onComplete(v -> campaign());
      }
    });
  }

  private void checkFollower() {
    vertx.eventBus().<JsonObject>request(addresses.healthReplication(), null, new DeliveryOptions().setSendTimeout(recheck.toMillis()))
        .map(reply -> ReplicationStatus.fromJson(reply.body()))
        .otherwise(e -> ReplicationStatus.notReady("the follower does not answer: " + e.getMessage()))
        .onSuccess(status -> {
          if (stopped || held == null) {
            return;
          }
          long now = System.nanoTime();
          if (!status.cutOff()) {
            // Following, or refused by a source that answers (a slot in use, a missing privilege):
            // it refuses every node alike, and a handover would only move the refusal.
            cutOffSince = -1;
          } else if (cutOffSince < 0) {
            cutOffSince = now;
          } else if (now - cutOffSince >= handover.toNanos() && node.memberIds().size() > 1) {
            LOG.warn("node {} hands replication slot {} over: its follower has been cut off from the source for {} s ({})",
                node.id(), slot, handover.toSeconds(), status.reason());
            stepDown(true).onComplete(v -> vertx.setTimer(handover.toMillis(), id -> campaign()));
          }
        });
  }

  /**
   * Undeploys the duties, newest first, and releases the lock if {@code release}. Forgets the lock at
   * once, so that a second reason to step down (a recheck answered late, a stop) finds nothing to do.
   */
  private Future<Void> stepDown(boolean release) {
    Lock leaving = held;
    held = null;
    vertx.cancelTimer(recheckTimer);
    List<String> duties = List.copyOf(deployed);
    deployed.clear();
    Future<Void> chain = Future.succeededFuture();
    for (int i = duties.size() - 1; i >= 0; i--) {
      String id = duties.get(i);
      chain = chain.compose(v -> vertx.deploymentIDs().contains(id) ? vertx.undeploy(id) : Future.succeededFuture());
    }
    return chain.eventually(() -> {
      role.leading(false);
      // The record goes before the lock, so that no node finds this one recorded once it has left.
      Future<Void> letGo = release && leaving != null
          ? lock.forget().otherwiseEmpty().andThen(forgotten -> leaving.release()) : Future.succeededFuture();
      return letGo.eventually(() -> stopped ? relay.stop() : relay.follow());
    });
  }

  @Override
  public Future<?> stop() {
    stopped = true;
    if (held == null) {
      return relay.stop();
    }
    LOG.info("node {} releases the follower lock of replication slot {}", node.id(), slot);
    return stepDown(true);
  }
}
