package io.ackpoint.core;

import io.vertx.core.json.JsonObject;

/**
 * Whether replication progress can reach the acknowledgement engine now, and if not, why, in one
 * line for operators. The readiness probe's {@code replication} and {@code reason}. {@code cutOff}:
 * the follower could not reach the source at all (no connection, or one gone silent), which another
 * node of a cluster might; not said of a source that answered and refused (a slot in use, a missing
 * privilege), which refuses every node alike.
 */
public record ReplicationStatus(boolean ready, String reason, boolean cutOff) {

  public static final ReplicationStatus READY = new ReplicationStatus(true, null, false);

  public static ReplicationStatus notReady(String reason) {
    return new ReplicationStatus(false, reason, false);
  }

  /** Not ready: this node's follower cannot reach the source. */
  public static ReplicationStatus cutOff(String reason) {
    return new ReplicationStatus(false, reason, true);
  }

  /** {@code {"replication": bool, "reason"?: string, "cut_off"?: true}}, the form answered on {@code HEALTH_REPLICATION}. */
  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("replication", ready);
    if (reason != null) {
      json.put("reason", reason);
    }
    if (cutOff) {
      json.put("cut_off", true);
    }
    return json;
  }

  public static ReplicationStatus fromJson(JsonObject json) {
    return new ReplicationStatus(json.getBoolean("replication", false), json.getString("reason"), json.getBoolean("cut_off", false));
  }
}
