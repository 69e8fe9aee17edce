package io.ackpoint.source;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** MongoDB positions compare as cluster times, wherever they are compared as text. */
class ClusterTimeTest {

  private static JsonObject timestamp(long t, long i) {
    return new JsonObject().put("$timestamp", new JsonObject().put("t", t).put("i", i));
  }

  @Test
  void textOrderIsClusterTimeOrder() {
    List<String> inOrder = List.of(ClusterTime.of(1, 0), ClusterTime.of(1, 9), ClusterTime.of(1, 10),
        ClusterTime.of(1, 0xFFFFFFFFL), ClusterTime.of(2, 0), ClusterTime.of(10, 1), ClusterTime.of(0xFFFFFFFFL, 0));
    List<String> sorted = new ArrayList<>(inOrder);
    sorted.sort(null);
    assertEquals(inOrder, sorted);
    assertEquals("0000000100000009", ClusterTime.of(1, 9));
    assertEquals((1L << 32) | 9, ClusterTime.FORMAT.ordinal(ClusterTime.of(1, 9)));
  }

  @Test
  void canonicalFormIsSixteenUpperCaseHexDigits() {
    assertEquals("65A1B2C300000001", ClusterTime.FORMAT.canonical("65a1b2c300000001"));
    assertNull(ClusterTime.FORMAT.canonical("65A1B2C3/00000001"));
    assertNull(ClusterTime.FORMAT.canonical("1700000000.1"));
    assertNull(ClusterTime.FORMAT.canonical(null));
  }

  @Test
  void timestampsAsTheClientDecodesThemIncludingSecondsBeyondASignedInt() {
    assertEquals(ClusterTime.of(1_700_000_000, 3), ClusterTime.fromTimestamp(timestamp(1_700_000_000, 3)));
    // The Vert.x codec hands out seconds as a Java int: after 2038 they come negative.
    assertEquals("8000000000000001", ClusterTime.fromTimestamp(timestamp(Integer.MIN_VALUE, 1)));
    assertNull(ClusterTime.fromTimestamp(new JsonObject().put("$date", "2024-01-01T00:00:00Z")));
  }

  @Test
  void aReplyTellsItsClusterTimeAndOperationTime() {
    // A hello reply of a replica set member, as the Vert.x client decodes it.
    JsonObject reply = new JsonObject()
        .put("isWritablePrimary", true).put("setName", "rs0")
        .put("$clusterTime", new JsonObject().put("clusterTime", timestamp(1_700_000_100, 7))
            .put("signature", new JsonObject().put("hash", new JsonObject().put("$binary", "AAAAAAAAAAAAAAAAAAAAAAAAAAA=")).put("keyId", 0L)))
        .put("operationTime", timestamp(1_700_000_100, 5))
        .put("ok", 1.0);
    assertEquals(ClusterTime.of(1_700_000_100, 7), ClusterTime.ofReply(reply));
    assertEquals(ClusterTime.of(1_700_000_100, 5), ClusterTime.operationTime(reply));
    // A standalone mongod, or the test server: no logical clock.
    assertNull(ClusterTime.ofReply(new JsonObject().put("ismaster", true).put("ok", 1.0)));
    assertNull(ClusterTime.operationTime(new JsonObject().put("n", 1).put("ok", 1.0)));
  }

  @Test
  void aResumeTokenStartsWithItsClusterTime() {
    // A resume token as in the MongoDB manual's change event example: 0x82, then Timestamp(1666193824, 1).
    JsonObject token = new JsonObject().put("_data", "82635019A0000000012B042C0100296E5A1004AB1154ACACD849A48C61756D70D3B21F463C6F"
        + "7065726174696F6E54797065003C696E736572740046646F63756D656E744B65790046645F69640064635019A078BE67426D7CF4D2000004");
    assertEquals(ClusterTime.of(1_666_193_824L, 1), ClusterTime.fromResumeToken(token));
    assertTrue(ClusterTime.fromResumeToken(token).compareTo(ClusterTime.of(1_666_193_823L, 99)) > 0);
    // The test server's tokens are plain hex of the timestamp: not read as one (its events carry clusterTime).
    assertNull(ClusterTime.fromResumeToken(new JsonObject().put("_data", "6b0d801000000006")));
    assertNull(ClusterTime.fromResumeToken(null));
  }
}
