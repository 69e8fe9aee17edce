package io.ackpoint.http;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** SPEC section 5: an acknowledgement is a checkpoint_diff line, then a checkpoint_complete line. */
class StreamFormatTest {

  private final StreamFormat format = new StreamFormat.PowerSync();

  private static String encoded(String checkpoint, long writeCheckpoint) {
    JsonObject diff = new JsonObject()
        .put("last_op_id", checkpoint)
        .put("write_checkpoint", Long.toString(writeCheckpoint))
        .put("updated_buckets", new JsonArray())
        .put("removed_buckets", new JsonArray());
    return new JsonObject().put("checkpoint_diff", diff).encode() + "\n"
        + new JsonObject().put("checkpoint_complete", new JsonObject().put("last_op_id", checkpoint)).encode() + "\n";
  }

  @Test
  void anAcknowledgementIsTheDiffThenTheCompleteLine() {
    assertEquals(encoded("3172", 7), format.acknowledged("3172", 7));
  }

  @Test
  void extremeSequencesAndIdsAreWrittenAsTheJsonEncoderWould() {
    for (long id : new long[] {0, 1, Long.MAX_VALUE}) {
      for (String checkpoint : new String[] {"0", Long.toString(Long.MAX_VALUE), Long.toString(Long.MIN_VALUE)}) {
        String line = format.acknowledged(checkpoint, id);
        assertEquals(encoded(checkpoint, id), line);
        assertEquals(Long.toString(id), new JsonObject(line.substring(0, line.indexOf('\n')))
            .getJsonObject("checkpoint_diff").getString("write_checkpoint"));
      }
    }
  }

  @Test
  void aTokenValidForLongerThanA32BitClientCanCountIsReportedAsTheLargest32BitNumber() {
    assertEquals("{\"token_expires_in\":3600}\n", format.keepalive(3600));
    assertEquals("{\"token_expires_in\":2147483647}\n", format.keepalive(2_306_346_386L));
    assertEquals("{\"token_expires_in\":2147483647}\n", format.keepalive(251_606_202_385L));
  }
}
