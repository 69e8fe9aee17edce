package io.ackpoint.metrics;

import io.ackpoint.source.Lsn;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The stored → acknowledged latency counts every batch once, whichever is told first, and never
 * counts a batch as acknowledged by a position that may precede its commit.
 */
class AcknowledgementLatencyTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final AckpointMetrics metrics = new AckpointMetrics(registry, Lsn.FORMAT);

  private long recorded() {
    return registry.get("ackpoint.acknowledgement.latency").timer().count();
  }

  @Test
  void aBatchIsRecordedWhenItsMarkerIsApplied() {
    metrics.acknowledgedAt("0/200");
    metrics.positionApplied("0/100", 1, 0);
    assertEquals(0, recorded(), "a position before the marker");
    metrics.positionApplied("0/200", 1, 1);
    metrics.positionApplied("0/300", 1, 0);
    assertEquals(1, recorded());
  }

  @Test
  void aMarkerAppliedBeforeTheBatchWasToldIsRecordedAtOnce() {
    // The marker behind the batch on its connection can be applied before the batch's callback runs.
    metrics.positionApplied("0/300", 1, 1);
    metrics.acknowledgedAt("0/200");
    assertEquals(1, recorded(), "recorded without waiting for another position");
    metrics.positionApplied("0/400", 1, 0);
    assertEquals(1, recorded(), "and not again");
  }

  @Test
  void aBatchAcknowledgedBeforeItsMarkerWasNeededIsRecordedAtOnce() {
    metrics.acknowledgedAlready();
    assertEquals(1, recorded());
    metrics.positionApplied("0/400", 1, 0);
    assertEquals(1, recorded(), "and not again");
  }

  @Test
  void aPositionAppliedPastTheHeadBeforeTheBatchWasToldDoesNotCount() {
    // A head is read before the batch commits: a position past it may still precede the commit.
    metrics.positionApplied("0/300", 1, 0);
    metrics.pendingSince("0/100");
    assertEquals(0, recorded());
    metrics.positionApplied("0/400", 1, 1);
    assertEquals(1, recorded());
  }

  @Test
  void aBatchPendingAtAHeadIsRecordedWhenAPositionReachesIt() {
    metrics.positionApplied("0/100", 1, 0);
    metrics.pendingSince("0/250");
    metrics.positionApplied("0/200", 1, 0);
    assertEquals(0, recorded());
    metrics.positionApplied("0/250", 1, 1);
    assertEquals(1, recorded());
  }
}
