package io.ackpoint;

/** Every event-bus address Ackpoint uses. The first three are the public API (SPEC section 7). */
public final class EventBusAddresses {

  /** Request-reply: {@code {"user_id","client_id"?,"checkpoint_request_id"?}} → {@code {"write_checkpoint","replication_head"}}. */
  public static final String CHECKPOINT_CREATE = "ackpoint.checkpoint.create";
  /**
   * Publish: {@code {"position"}}, replication observed at that position, from another verticle (an
   * external follower). Validated: a position beyond the source's head is rejected.
   */
  public static final String REPLICATION_PROGRESS = "ackpoint.replication.progress";
  /**
   * Publish: {@code {"user_id","client_id"?,"write_checkpoint","position","checkpoint"}} once replication
   * passed a checkpoint; {@code client_id} is absent for a user without one.
   */
  public static final String CHECKPOINT_REACHED = "ackpoint.checkpoint.reached";

  /**
   * Local: the HTTP verticles' own way to the batcher, with input they already validated: a
   * {@code CheckpointCommand} in, a {@code CheckpointCreated} out, passed as records without JSON.
   */
  public static final String CHECKPOINT_SUBMIT = "ackpoint.internal.checkpoint.submit";
  /** Local: the built-in follower's observed positions, as strings; trusted, since they come from the slot itself. */
  public static final String POSITION_OBSERVED = "ackpoint.internal.replication.observed";
  /** Local: {@code {"user_id","client_id"?}} → {@code {"write_checkpoint"?,"checkpoint"}}, the latest acknowledged id. */
  public static final String CHECKPOINT_LATEST = "ackpoint.internal.checkpoint.latest";
  /** Local: reads a head, forces a marker, answers {@code {"checkpoint"}} once replication passed the head. */
  public static final String HEAD_AWAIT = "ackpoint.internal.head.await";
  /**
   * Local request-reply: {@code {"position", "checkpoints": [{"user_id","client_id"?,"checkpoint","request"}]}},
   * the custom checkpoints of one transaction seen by the follower; the reply comes once they are
   * durably stored (a failure otherwise), and only then does the follower confirm the position.
   */
  public static final String CUSTOM_CHECKPOINTS = "ackpoint.internal.custom.checkpoints";
  /** Local: runs one compaction, answers {@code {"deleted","batches","remaining","retention_seconds"}}. */
  public static final String COMPACTION_RUN = "ackpoint.internal.compaction.run";
  /** Local: answers {@code {"storage": bool, "source": bool}} for the readiness probe. */
  public static final String HEALTH = "ackpoint.internal.health";
  /**
   * Local: answers {@code {"replication": bool, "reason"?}} for the readiness probe: whether progress
   * can reach the acknowledgement engine. Answered by the follower, or without one by the
   * acknowledgement verticle (has external progress arrived within {@code replication.progress_timeout}).
   */
  public static final String HEALTH_REPLICATION = "ackpoint.internal.health.replication";

  private EventBusAddresses() {
  }
}
