package io.ackpoint;

/**
 * Every event-bus address of one Ackpoint, under its prefix ({@code eventbus.prefix}, default
 * {@code ackpoint}), so that two Ackpoints can share one Vert.x. The first three are the public API
 * (SPEC section 7); the others carry Ackpoint's own traffic between its verticles, always locally.
 */
public record AckpointAddresses(String prefix) {

  public static final String DEFAULT_PREFIX = "ackpoint";

  public AckpointAddresses {
    if (prefix == null || !prefix.matches("[A-Za-z0-9_.-]{1,100}")) {
      throw new IllegalArgumentException("an event-bus prefix is 1 to 100 letters, digits, '_', '.' or '-'");
    }
  }

  /** Request-reply: {@code {"user_id","client_id"?,"checkpoint_request_id"?}} → {@code {"write_checkpoint","replication_head"}}. */
  public String checkpointCreate() {
    return prefix + ".checkpoint.create";
  }

  /**
   * Publish: {@code {"position"}}, replication observed at that position, from another verticle (an
   * external follower). Validated: a position beyond the source's head is rejected.
   */
  public String replicationProgress() {
    return prefix + ".replication.progress";
  }

  /** Publish: a {@link CheckpointReached}, once replication passed a user's checkpoint. */
  public String checkpointReached() {
    return prefix + ".checkpoint.reached";
  }

  /**
   * Local: the HTTP verticles' own way to the batcher, with input they already validated: a
   * {@code CheckpointCommands} in (an event loop's commands of one turn), a {@code CheckpointOutcomes}
   * out, passed as records without JSON.
   */
  public String checkpointSubmit() {
    return internal("checkpoint.submit");
  }

  /**
   * Publish, to every node: a {@code PositionReached}, one per applied position with all the users
   * it acknowledged; each node's acknowledgement verticle, its only consumer there, tells its
   * consumers of {@link #checkpointReached()} and, where another node's engine announced it, passes
   * it on to its streams and waiters ({@link #positionHeard()}).
   */
  public String positionReached() {
    return internal("position.reached");
  }

  /**
   * Local: every {@code PositionReached} this node hears, to the streams and waiters of each HTTP
   * event loop: published by this node's engine, if it runs here, and passed on, as it was decoded,
   * by the node's acknowledgement verticle from {@link #positionReached()} for the others.
   */
  public String positionHeard() {
    return internal("position.heard");
  }

  /**
   * {@code PendingCheckpoints} from each node's batcher to the acknowledgement engine, on whichever
   * node of the cluster runs it (local on a Vert.x that is not clustered); dropped while none does
   * (those checkpoints are acknowledged by the engine's statement).
   */
  public String pendingCheckpoints() {
    return internal("checkpoint.pending");
  }

  /**
   * A head (string) read after positions the acknowledgement engine applied (by a batcher that found
   * the source went back, see {@code SourceRewinds}, or by the follower as it opens its stream), to
   * the engine, on whichever node runs it: if it applied a position beyond that head, the source went
   * back, and it starts over. Answered once that is done.
   */
  public String sourceRewound() {
    return internal("source.rewound");
  }

  /** Marks a {@link #sourceRewound()} head that the follower read as it opened its stream, just now. */
  public static final String HEAD_READ_AT_OPEN = "ackpoint-head-read-at-open";

  /** Local: the built-in follower's observed positions, as strings; trusted, since they come from the slot itself. */
  public String positionObserved() {
    return internal("replication.observed");
  }

  /** Local: {@code {"user_id","client_id"}} → {@code {"write_checkpoint"?,"checkpoint"}}, the latest acknowledged id. */
  public String checkpointLatest() {
    return internal("checkpoint.latest");
  }

  /** Local: reads a head and forces a marker past it; answers {@code {"head"}}. */
  public String headMark() {
    return internal("head.mark");
  }

  /** Local: {@code {"head"}} → {@code {"checkpoint"}} once replication passed the head. */
  public String headAwait() {
    return internal("head.await");
  }

  /**
   * Local request-reply: {@code {"position", "checkpoints": [{"user_id","client_id"?,"checkpoint","request"}]}},
   * the custom checkpoints of one transaction seen by the follower; the reply comes once they are
   * durably stored (a failure otherwise), and only then does the follower confirm the position.
   */
  public String customCheckpoints() {
    return internal("custom.checkpoints");
  }

  /** Local: runs one compaction, answers {@code {"deleted","batches","remaining","retention_seconds"}}. */
  public String compactionRun() {
    return internal("compaction.run");
  }

  /** Local: answers {@code {"storage": bool, "source": bool}} for the readiness probe. */
  public String health() {
    return internal("health");
  }

  /**
   * Local: answers {@code {"replication": bool, "reason"?}} for the readiness probe: whether progress
   * can reach the acknowledgement engine. Answered by the follower, or without one by the
   * acknowledgement verticle (has external progress arrived within {@code replication.progress_timeout}).
   */
  public String healthReplication() {
    return internal("health.replication");
  }

  /**
   * Cluster-wide, answered by the node that holds the follower lock only: {@code {"replication": bool,
   * "reason"?, "node"}}, how its follower (or external progress) fares, for the other nodes' readiness.
   */
  public String clusterReplicationHealth() {
    return internal("cluster.health.replication");
  }

  /** {@link #clusterReplicationHealth()}, answered by the node {@code nodeId} only, while it holds the follower lock. */
  public String clusterReplicationHealthOf(String nodeId) {
    return clusterReplicationHealth() + "." + nodeId;
  }

  /** Local: this node's part of {@code GET /admin/status}. */
  public String nodeStatus() {
    return internal("node.status");
  }

  private String internal(String name) {
    return prefix + ".internal." + name;
  }
}
