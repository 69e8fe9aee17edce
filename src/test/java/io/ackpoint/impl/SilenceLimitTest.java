package io.ackpoint.impl;

import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static io.ackpoint.impl.PgWire.readyForQuery;
import static io.ackpoint.impl.PgWire.startUp;
import static io.ackpoint.impl.PgWire.typed;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The silence limit on a socket's bytes, on the event loop's clock. Each channel's clock is frozen
 * from its start: only {@link #after} moves it, so a stall of the machine between two steps is not
 * counted as silence (it was, once, in CI).
 */
class SilenceLimitTest {

  private static final long LIMIT_MILLIS = 1_000;

  @Test
  void aConnectionOwedAnAnswerIsClosedOnceSilentForTheLimit() {
    EmbeddedChannel socket = startedUp();
    socket.writeOutbound(PgWire.query("SELECT 1"));
    after(socket, LIMIT_MILLIS - 1);
    assertTrue(socket.isOpen(), "within the limit");
    after(socket, 1);
    assertFalse(socket.isOpen());
  }

  @Test
  void theLimitCountsFromTheLastByteReceived() {
    EmbeddedChannel socket = startedUp();
    socket.writeOutbound(PgWire.query("SELECT 1"));
    after(socket, LIMIT_MILLIS - 1);
    socket.writeInbound(typed('T', new byte[2]));
    after(socket, LIMIT_MILLIS - 1);
    assertTrue(socket.isOpen(), "a row description came");
    after(socket, 1);
    assertFalse(socket.isOpen());
  }

  @Test
  void anIdleConnectionStaysOpen() {
    EmbeddedChannel socket = startedUp();
    socket.writeOutbound(PgWire.query("SELECT 1"));
    socket.writeInbound(typed('C', "SELECT 1\0"), readyForQuery());
    after(socket, 10 * LIMIT_MILLIS);
    assertTrue(socket.isOpen());
    socket.writeOutbound(PgWire.query("SELECT 1"));
    after(socket, LIMIT_MILLIS);
    assertFalse(socket.isOpen(), "owed again after its idleness: the limit counts from the query");
  }

  @Test
  void aStartUpNeverAnsweredIsClosedOnceSilentForTheLimit() {
    EmbeddedChannel socket = socket();
    socket.writeOutbound(startUp());
    after(socket, LIMIT_MILLIS);
    assertFalse(socket.isOpen());
  }

  private static EmbeddedChannel startedUp() {
    EmbeddedChannel socket = socket();
    socket.writeOutbound(startUp());
    socket.writeInbound(readyForQuery());
    return socket;
  }

  private static EmbeddedChannel socket() {
    EmbeddedChannel socket = new EmbeddedChannel();
    socket.freezeTime();
    socket.pipeline().addLast(new SilenceLimit(LIMIT_MILLIS));
    return socket;
  }

  private static void after(EmbeddedChannel socket, long millis) {
    socket.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
    socket.runScheduledPendingTasks();
  }
}
