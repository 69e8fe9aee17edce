package io.ackpoint.source;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;

import java.util.Set;

/** How the change-stream follower takes a failure of its stream, from what the server answered. */
final class StreamFailures {

  enum Kind {
    /** The server cannot run this change stream, and retrying will not change that (a standalone mongod). */
    CANNOT_FOLLOW,
    /** The saved resume token is no longer in the oplog, or is not a token: only starting afresh helps. */
    HISTORY_LOST,
    /** Anything else: the network, an election, a missing privilege; retried, and readiness says why. */
    PASSING
  }

  private static final Set<Integer> HISTORY_LOST = Set.of(286, 280, 260);
  /** Errors that pass: the change streams specification's resumable ones, and privileges an operator can grant. */
  private static final Set<Integer> PASSING = Set.of(6, 7, 13, 18, 63, 89, 91, 133, 150, 189, 234, 262, 9001, 10107,
      11600, 11602, 13388, 13435, 13436);

  private StreamFailures() {
  }

  /**
   * Whether the failure says that this node cannot reach the source (no socket, or no server within
   * the selection timeout), which another node of a cluster might: see {@code ReplicationStatus.cutOff}.
   */
  static boolean cutOff(Throwable failure) {
    return failure instanceof MongoSocketException || failure instanceof MongoTimeoutException;
  }

  /**
   * {@code closedAtOpen}: the server answered the stream's opening with a cursor already closed, as a
   * server without an oplog may. Any other refusal the server answers (standalone mongod: 40573,
   * "only supported on replica sets"; a server without the stage: 40324) cannot follow either.
   */
  static Kind of(Throwable failure, boolean closedAtOpen) {
    if (closedAtOpen) {
      return Kind.CANNOT_FOLLOW;
    }
    if (!(failure instanceof MongoCommandException command)) {
      return Kind.PASSING;
    }
    int code = command.getErrorCode();
    if (HISTORY_LOST.contains(code)) {
      return Kind.HISTORY_LOST;
    }
    if (PASSING.contains(code) || command.hasErrorLabel("ResumableChangeStreamError")
        || command.hasErrorLabel("TransientTransactionError")) {
      return Kind.PASSING;
    }
    return Kind.CANNOT_FOLLOW;
  }
}
