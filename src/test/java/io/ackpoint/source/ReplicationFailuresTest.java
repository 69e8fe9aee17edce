package io.ackpoint.source;

import org.junit.jupiter.api.Test;

import java.sql.SQLException;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which failures of the follower say that this node cannot reach the source (a cluster's leader then
 * hands over, Leadership) and which say that the source answered and refused (every node alike).
 */
class ReplicationFailuresTest {

  @Test
  void noConnectionOrAStreamLostWithoutAnAnswerIsCutOff() {
    assertTrue(ReplicationFailures.cutOff(new SQLException("The connection attempt failed.", "08001")));
    assertTrue(ReplicationFailures.cutOff(new SQLException("the replication connection failed while idle", "08006")));
    assertTrue(ReplicationFailures.cutOff(new SQLException("nothing from the replication connection for 90 s")));
    assertTrue(ReplicationFailures.cutOff(new IllegalStateException("a socket closed under the driver")));
  }

  @Test
  void aSourceThatAnsweredAndRefusedIsNotCutOff() {
    assertFalse(ReplicationFailures.cutOff(new SQLException("replication slot \"ackpoint\" is active for PID 42", "55006")));
    assertFalse(ReplicationFailures.cutOff(new SQLException("must be superuser or replication role", "42501")));
    assertFalse(ReplicationFailures.cutOff(new SQLException("password authentication failed", "28P01")));
    assertFalse(ReplicationFailures.cutOff(new FollowerFailure("custom.table \"checkpoints\" does not exist in schema public")));
  }
}
