package io.ackpoint.core;

import io.vertx.core.json.JsonObject;

/**
 * Whether replication progress can reach the acknowledgement engine now, and if not, why, in one
 * line for operators. The readiness probe's {@code replication} and {@code reason}.
 */
public record ReplicationStatus(boolean ready, String reason) {

  public static final ReplicationStatus READY = new ReplicationStatus(true, null);

  public static ReplicationStatus notReady(String reason) {
    return new ReplicationStatus(false, reason);
  }

  /** {@code {"replication": bool, "reason"?: string}}, the form answered on {@code HEALTH_REPLICATION}. */
  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("replication", ready);
    if (reason != null) {
      json.put("reason", reason);
    }
    return json;
  }

  public static ReplicationStatus fromJson(JsonObject json) {
    return new ReplicationStatus(json.getBoolean("replication", false), json.getString("reason"));
  }
}
