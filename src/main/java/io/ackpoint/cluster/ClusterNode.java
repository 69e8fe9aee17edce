package io.ackpoint.cluster;

import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.spi.cluster.ClusterManager;

import java.util.List;
import java.util.UUID;

/**
 * This node as the cluster knows it: its id and how many members the cluster has now. A Vert.x that
 * is not clustered is a cluster of one, with an id made up at start.
 */
final class ClusterNode {

  private final ClusterManager manager;
  private final String id;

  private ClusterNode(ClusterManager manager, String id) {
    this.manager = manager;
    this.id = id;
  }

  static ClusterNode of(Vertx vertx) {
    ClusterManager manager = vertx.isClustered() ? ((VertxInternal) vertx).clusterManager() : null;
    return new ClusterNode(manager, manager != null ? manager.getNodeId() : UUID.randomUUID().toString());
  }

  boolean clustered() {
    return manager != null;
  }

  String id() {
    return id;
  }

  /** Members of the cluster as this node sees them now (a local view: it does not block). */
  int members() {
    return memberIds().size();
  }

  /** The ids of the members, as {@link #members()} counts them. */
  List<String> memberIds() {
    return manager == null ? List.of(id) : manager.getNodes();
  }
}
