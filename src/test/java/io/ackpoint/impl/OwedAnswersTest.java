package io.ackpoint.impl;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static io.ackpoint.impl.PgWire.readyForQuery;
import static io.ackpoint.impl.PgWire.startUp;
import static io.ackpoint.impl.PgWire.typed;
import static io.ackpoint.impl.PgWire.untyped;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a PostgreSQL connection is owed, from its bytes as they pass the socket. */
class OwedAnswersTest {

  @Test
  void aStartUpIsOwedUntilTheServerIsReadyForQueries() {
    OwedAnswers answers = new OwedAnswers();
    assertFalse(answers.due());
    answers.sent(startUp());
    assertTrue(answers.due());
    answers.received(concat(typed('R', new byte[4]), typed('S', "server_version\0" + "17\0"), typed('K', new byte[8])));
    assertTrue(answers.due(), "authenticated, not yet ready");
    answers.received(readyForQuery());
    assertFalse(answers.due());
  }

  @Test
  void pipelinedStatementsAreOwedUntilEachIsAnswered() {
    OwedAnswers answers = started();
    answers.sent(concat(typed('P', "\0SELECT 1\0\0\0"), typed('B', new byte[8]), typed('E', new byte[5]), typed('S', ""),
        PgWire.query("SELECT 2")));
    answers.received(concat(typed('1', ""), typed('2', ""), typed('C', "SELECT 1\0"), readyForQuery()));
    assertTrue(answers.due(), "the simple query is still owed");
    answers.received(concat(typed('C', "SELECT 1\0"), readyForQuery()));
    assertFalse(answers.due());
  }

  @Test
  void messagesSplitAcrossReadsAndWritesAreCountedOnce() {
    OwedAnswers answers = new OwedAnswers();
    for (byte b : bytes(concat(startUp(), PgWire.query("SELECT 1")))) {
      answers.sent(Unpooled.wrappedBuffer(new byte[] {b}));
    }
    byte[] answered = bytes(concat(readyForQuery(), typed('T', new byte[30]), typed('C', "SELECT 1\0"), readyForQuery()));
    for (int i = 0; i < answered.length; i++) {
      answers.received(Unpooled.wrappedBuffer(answered, i, 1));
      assertEquals(i < answered.length - 1, answers.due(), "after byte " + i);
    }
  }

  @Test
  void anSslRequestIsOwedItsOneByteAndTheStartUpAfterItIsUntyped() {
    OwedAnswers answers = new OwedAnswers();
    answers.sent(untyped(80877103, new byte[0]));
    assertTrue(answers.due());
    answers.received(Unpooled.wrappedBuffer(new byte[] {'S'}));
    assertFalse(answers.due());
    answers.sent(startUp());
    answers.received(readyForQuery());
    assertFalse(answers.due());
    answers.sent(PgWire.query("SELECT 1"));
    assertTrue(answers.due());
  }

  @Test
  void aCancelRequestOwesNothing() {
    OwedAnswers answers = new OwedAnswers();
    answers.sent(untyped(80877102, new byte[8]));
    assertFalse(answers.due());
  }

  @Test
  void bytesThatFrameAsNoMessageLeaveAnAnswerDueForGood() {
    OwedAnswers answers = started();
    answers.received(Unpooled.wrappedBuffer(new byte[] {'Z', 0, 0, 0, 2}));
    assertTrue(answers.due());
    answers.received(readyForQuery());
    assertTrue(answers.due());
  }

  @Test
  void aStartUpOfAnotherProtocolVersionLeavesAnAnswerDueForGood() {
    OwedAnswers answers = new OwedAnswers();
    answers.sent(untyped(196610, "user\0postgres\0\0".getBytes(StandardCharsets.US_ASCII)));
    answers.received(readyForQuery());
    assertTrue(answers.due());
  }

  @Test
  void bytesThatAreNoStartUpLeaveAnAnswerDueForGood() {
    OwedAnswers answers = new OwedAnswers();
    // A TLS ClientHello where a start-up was expected: its record header reads as a length of 369 MB.
    answers.sent(Unpooled.wrappedBuffer(new byte[] {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, (byte) 0xfc}));
    assertTrue(answers.due());
  }

  private static OwedAnswers started() {
    OwedAnswers answers = new OwedAnswers();
    answers.sent(startUp());
    answers.received(readyForQuery());
    return answers;
  }

  private static ByteBuf concat(ByteBuf... parts) {
    return Unpooled.wrappedBuffer(parts);
  }

  private static byte[] bytes(ByteBuf buf) {
    byte[] bytes = new byte[buf.readableBytes()];
    buf.getBytes(buf.readerIndex(), bytes);
    return bytes;
  }
}
