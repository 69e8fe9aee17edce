package io.ackpoint.ack;

import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.LocalMap;

import java.util.UUID;

/**
 * Which Vert.x instance an engine's announcement comes from: an id made once per instance and kept
 * in its local shared data, so that every Ackpoint on it (and every engine, after a failover back
 * to it) names the same one. A node's acknowledgement verticle passes on to the node's event loops
 * what another instance announced; its own engine tells them itself.
 */
final class NodeOrigin {

  static final String HEADER = "ackpoint-origin";
  /** On the copy an engine sends every node of a cluster, beside the local copy its own node hears first. */
  static final String FOR_OTHER_NODES = "ackpoint-for-other-nodes";

  private NodeOrigin() {
  }

  static String of(Vertx vertx) {
    LocalMap<String, String> ids = vertx.sharedData().getLocalMap("ackpoint.node-origin");
    String id = ids.get("id");
    if (id == null) {
      String made = UUID.randomUUID().toString();
      String earlier = ids.putIfAbsent("id", made);
      id = earlier != null ? earlier : made;
    }
    return id;
  }

  /** Whether {@code headers} name {@code origin}: false for announcements of other instances. */
  static boolean is(String origin, MultiMap headers) {
    return origin.equals(headers.get(HEADER));
  }

  /** Whether {@code headers} are those of the cluster's copy of an announcement of {@code origin}'s own engine. */
  static boolean isOwnCopyForOthers(String origin, MultiMap headers) {
    return headers.contains(FOR_OTHER_NODES) && is(origin, headers);
  }
}
