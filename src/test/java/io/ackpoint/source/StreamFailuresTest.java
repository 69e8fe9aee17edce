package io.ackpoint.source;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.ServerAddress;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

import static io.ackpoint.source.StreamFailures.Kind.CANNOT_FOLLOW;
import static io.ackpoint.source.StreamFailures.Kind.HISTORY_LOST;
import static io.ackpoint.source.StreamFailures.Kind.PASSING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What real MongoDB answers, which the test server cannot: each failure is taken as it deserves. */
class StreamFailuresTest {

  private static MongoCommandException answered(int code, String labels) {
    return new MongoCommandException(BsonDocument.parse("{ok: 0, code: " + code + ", errmsg: 'x'"
        + (labels == null ? "" : ", errorLabels: ['" + labels + "']") + "}"), new ServerAddress());
  }

  @Test
  void aStandaloneOrAServerWithoutTheStageCannotFollow() {
    assertEquals(CANNOT_FOLLOW, StreamFailures.of(answered(40573, null), false));
    assertEquals(CANNOT_FOLLOW, StreamFailures.of(answered(40324, null), false));
    assertEquals(CANNOT_FOLLOW, StreamFailures.of(new MongoSocketReadException("closed", new ServerAddress()), true),
        "a cursor closed as it opened, whatever came after");
  }

  @Test
  void electionsTheNetworkAndPrivilegesPass() {
    assertEquals(PASSING, StreamFailures.of(answered(10107, null), false));
    assertEquals(PASSING, StreamFailures.of(answered(13, null), false), "a privilege can be granted while Ackpoint runs");
    assertEquals(PASSING, StreamFailures.of(answered(999, "ResumableChangeStreamError"), false));
    assertEquals(PASSING, StreamFailures.of(new MongoSocketReadException("closed", new ServerAddress()), false));
  }

  /** A cluster's leader cut off from the source hands over (Leadership); one the server answered does not. */
  @Test
  void noSocketOrNoServerIsCutOffAnAnswerIsNot() {
    assertTrue(StreamFailures.cutOff(new MongoSocketReadException("closed", new ServerAddress())));
    assertTrue(StreamFailures.cutOff(new MongoTimeoutException("no server within 5000 ms")));
    assertFalse(StreamFailures.cutOff(answered(10107, null)), "an election: the server answered");
    assertFalse(StreamFailures.cutOff(answered(13, null)));
  }

  @Test
  void aTokenThatFellOffTheOplogIsHistoryLost() {
    assertEquals(HISTORY_LOST, StreamFailures.of(answered(286, null), false));
    assertEquals(HISTORY_LOST, StreamFailures.of(answered(280, null), false));
  }
}
