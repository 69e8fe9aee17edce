package io.ackpoint;

import io.vertx.core.Future;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

class AckpointErrorTest {

  @Test
  void aFailureBecomesTheErrorWithItsMessage() {
    Throwable failure = AckpointError.STORAGE_UNAVAILABLE.onFailure(Future.failedFuture(new IllegalStateException("gone"))).cause();
    AckpointException e = (AckpointException) failure;
    assertEquals(AckpointError.STORAGE_UNAVAILABLE, e.error());
    assertEquals(AckpointError.STORAGE_UNAVAILABLE.exception(new IllegalStateException("gone")).description(), e.description());
  }

  @Test
  void anAckpointErrorFromAnInnerStepIsPassedOnAsItIs() {
    AckpointException inner = AckpointError.SOURCE_UNAVAILABLE.exception(new IllegalStateException("gone"));
    assertSame(inner, AckpointError.STORAGE_UNAVAILABLE.onFailure(Future.failedFuture(inner)).cause());
  }

  /** Netty's native transport names the system call and the errno before what happened; clients and operators read the latter. */
  @Test
  void aNativeTransportFailureIsToldByWhatHappened() {
    assertEquals("checkpoint storage is unavailable: Connection reset by peer", AckpointError.STORAGE_UNAVAILABLE.exception(
        new java.io.IOException("recvAddress(..) failed with error(-104): Connection reset by peer")).description());
    assertEquals("checkpoint storage is unavailable: Connection refused", AckpointError.STORAGE_UNAVAILABLE.exception(
        new java.io.IOException("finishConnect(..) failed: Connection refused")).description());
  }
}
