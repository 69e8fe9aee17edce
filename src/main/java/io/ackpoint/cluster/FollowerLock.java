package io.ackpoint.cluster;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.core.shareddata.Lock;

import java.util.Map;

/**
 * The cluster-wide lock of one replication slot, and the record of which node holds it. The lock
 * elects the follower: Hazelcast releases it when its holder leaves the cluster, gracefully or
 * not. The record lets a holder find out that it is not the only one: after a split cluster has
 * merged, both sides' holders believe they lead, and the merged record names one of them. Neither
 * is the fence: the slot itself is, since the source lets one connection at a time stream from it.
 */
final class FollowerLock {

  static final String RECORDS = "ackpoint.followers";

  private final Vertx vertx;
  private final String name;
  private final String nodeId;

  /** {@code name}: the lock's, one per Ackpoint deployment and slot ({@code <prefix>.follower.<slot>}). */
  FollowerLock(Vertx vertx, String name, String nodeId) {
    this.vertx = vertx;
    this.name = name;
    this.nodeId = nodeId;
  }

  /** The lock, once held; fails when it is not free within {@code waitMillis} (on a worker thread: it blocks). */
  Future<Lock> acquire(long waitMillis) {
    return vertx.sharedData().getLockWithTimeout(name, waitMillis);
  }

  /** Records this node as the holder. */
  Future<Void> claim() {
    return records().compose(map -> map.put(name, nodeId));
  }

  /** Takes this node's record back, if it is still this node's: its term ended cleanly. */
  Future<Void> forget() {
    return records().compose(map -> map.removeIfPresent(name, nodeId)).mapEmpty();
  }

  /** Every record: lock name to the node recorded as its holder, for all slots and deployments. */
  Future<Map<String, String>> all() {
    return records().compose(AsyncMap::entries);
  }

  /** The node recorded as the holder, or null. */
  Future<String> holder() {
    return records().compose(map -> map.get(name));
  }

  private Future<AsyncMap<String, String>> records() {
    return vertx.sharedData().getAsyncMap(RECORDS);
  }
}
