package io.ackpoint.source;

import java.sql.SQLException;

/**
 * A reason the follower cannot go on, already worded for operators: its message is what readiness
 * and the log show, as it is. The follower treats it as any other stream failure: it closes the
 * stream and connects again, and the slot sends again everything after its confirmed position.
 */
final class FollowerFailure extends SQLException {

  FollowerFailure(String reason) {
    super(reason);
  }

  FollowerFailure(String reason, Throwable cause) {
    super(reason, cause);
  }
}
