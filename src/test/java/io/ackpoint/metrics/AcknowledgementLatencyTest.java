package io.ackpoint.metrics;

import io.ackpoint.source.Lsn;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The stored → reached latency counts every batch once, whichever of the two is told first. */
class AcknowledgementLatencyTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final AckpointMetrics metrics = new AckpointMetrics(registry, Lsn.FORMAT);

  private long recorded() {
    Timer timer = registry.get("ackpoint.acknowledgement.latency").timer();
    return timer.count();
  }

  @Test
  void aBatchStoredThenReachedIsRecordedOnce() {
    metrics.stored("0/100", 1);
    assertEquals(0, recorded(), "not reached yet");
    metrics.positionApplied("0/200", 1, 1);
    metrics.positionApplied("0/300", 1, 0);
    assertEquals(1, recorded());
  }

  @Test
  void aBatchReachedBeforeItsStoreWasToldIsRecordedOnce() {
    // The marker behind the batch on its connection can be applied before the batch's callback runs.
    metrics.positionApplied("0/200", 1, 1);
    metrics.stored("0/100", 1);
    assertEquals(1, recorded(), "recorded without waiting for another position");
    metrics.positionApplied("0/300", 1, 0);
    assertEquals(1, recorded(), "and not again");
  }

  @Test
  void aBatchAheadOfTheAppliedPositionWaits() {
    metrics.positionApplied("0/200", 1, 0);
    metrics.stored("0/250", 1);
    assertEquals(0, recorded());
    metrics.positionApplied("0/250", 1, 1);
    assertEquals(1, recorded());
  }
}
