/**
 * Several Ackpoint nodes as one service, on Vert.x's clustered event bus (Hazelcast): which node
 * follows replication (a cluster-wide lock per replication slot, {@link io.ackpoint.cluster.Leadership}),
 * how the other nodes learn whether replication is followed, and what {@code GET /admin/status}
 * tells of this node. Acknowledgements themselves need nothing of their own here: they are
 * published to every node on the clustered event bus.
 */
package io.ackpoint.cluster;
