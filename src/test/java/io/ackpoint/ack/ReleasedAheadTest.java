package io.ackpoint.ack;

import io.ackpoint.core.FullUserId;
import io.ackpoint.core.Reached;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** What a node keeps of the checkpoints released ahead of storage, and when it lets go of them. */
class ReleasedAheadTest {

  private static final FullUserId USER = FullUserId.of("u", "c");
  private static final FullUserId OTHER = FullUserId.of("other", "c");

  private final ReleasedAhead released = new ReleasedAhead();

  @Test
  void aReleaseIsKeptWhileStatementsBeforeTheOneThatRecordsItAnnounce() {
    released.released(List.of(new Reached(USER, 7)), 100, new StatementNumber("e", 3));
    released.recorded(List.of(new Reached(OTHER, 1)), new StatementNumber("e", 2));
    assertEquals(7, released.of(USER).writeCheckpoint());
  }

  /**
   * The statement that records a release may announce its user before the release arrives (the
   * user was recorded by an earlier statement too): it announces the release's user no more, but its
   * announcement says that storage answers the id.
   */
  @Test
  void aReleaseGoesOnceTheStatementThatRecordsItAnnouncesWhoeverItCarries() {
    released.released(List.of(new Reached(USER, 7)), 100, new StatementNumber("e", 3));
    released.recorded(List.of(), new StatementNumber("e", 3));
    assertNull(released.of(USER));
    assertEquals(0, released.size());
  }

  @Test
  void aReleaseOfAnEngineThatDiedGoesWithAnAnnouncementOfItsUserAtItsIdOrAbove() {
    released.released(List.of(new Reached(USER, 7)), 100, new StatementNumber("died", 3));
    released.recorded(List.of(), new StatementNumber("new", 9));
    assertEquals(7, released.of(USER).writeCheckpoint(), "numbers of two engines say nothing of each other");
    released.recorded(List.of(new Reached(USER, 6)), null);
    assertEquals(7, released.of(USER).writeCheckpoint());
    released.recorded(List.of(new Reached(USER, 7)), null);
    assertNull(released.of(USER));
  }
}
