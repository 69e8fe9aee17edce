package io.ackpoint.storage;

import io.ackpoint.core.WriteOutcome;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** One user's outcome of a write stored in two turns: the generated id of the first, the row after the second. */
class SuppliedAfterGeneratedTest {

  private static final WriteOutcome.Stored SUPPLIED = new WriteOutcome.Stored(9, 0, true, "00000000/00000002");

  @Test
  void theGeneratedIdOfTheFirstTurnGoesWithTheRowOfTheSecond() {
    assertEquals(new WriteOutcome.Stored(9, 4, true, "00000000/00000002"),
        SuppliedAfterGenerated.merge(new WriteOutcome.Stored(4, 4, true, "00000000/00000001"), SUPPLIED));
  }

  @Test
  void anExhaustedFirstTurnStaysExhaustedWithTheRowOfTheSecond() {
    assertEquals(new WriteOutcome.Exhausted(9, true), SuppliedAfterGenerated.merge(new WriteOutcome.Exhausted(9, false), SUPPLIED));
  }

  @Test
  void aTurnThatStoredNothingForTheUserAnswersForIt() {
    WriteOutcome rejected = new WriteOutcome.Rejected("no");
    assertEquals(rejected, SuppliedAfterGenerated.merge(rejected, SUPPLIED));
    assertEquals(new WriteOutcome.Contended(), SuppliedAfterGenerated.merge(new WriteOutcome.Stored(4, 4, true), new WriteOutcome.Contended()));
    assertEquals(rejected, SuppliedAfterGenerated.merge(new WriteOutcome.Exhausted(9, false), rejected));
  }
}
