package io.ackpoint.ack;

import io.ackpoint.core.PositionFormat;
import io.ackpoint.source.Lsn;
import io.ackpoint.source.ReplicationSource;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * How published progress is checked against the source's head: a position is judged only by a head
 * read that began after it arrived, since one that began before may predate the position's write.
 */
@ExtendWith(VertxExtension.class)
class ExternalProgressHeadReadTest {

  private static final String FIRST = "00000000/00000100";
  private static final String MARKER = "00000000/00000200";

  private static final String BEYOND = "00000000/00000300";

  /** The first read took the head before the marker was written; later reads see it. */
  private final Promise<String> firstRead = Promise.promise();
  private final ReplicationSource source = headsRead(firstRead.future(), MARKER);

  /** A source whose first head read answers {@code first}, and every later one {@code later}. */
  private static ReplicationSource headsRead(Future<String> first, String later) {
    return new ReplicationSource() {
      private int reads;

      @Override
      public PositionFormat positions() {
        return Lsn.FORMAT;
      }

      @Override
      public Future<String> readHead() {
        return reads++ == 0 ? first : Future.succeededFuture(later);
      }

      @Override
      public Future<Void> forceMarker() {
        return Future.succeededFuture();
      }
    };
  }

  @Test
  void aPositionPublishedWhileTheHeadIsReadIsJudgedByTheNextRead(Vertx vertx, VertxTestContext test) {
    List<String> accepted = new ArrayList<>();
    vertx.runOnContext(started -> {
      ExternalProgress progress = new ExternalProgress(vertx, source, position -> {
        accepted.add(position);
        if (position.equals(MARKER)) {
          test.verify(() -> assertEquals(List.of(FIRST, MARKER), accepted));
          test.completeNow();
        }
      }, () -> test.failNow("a position the source had written was rejected"));
      progress.offer(new JsonObject().put("position", FIRST));
      progress.offer(new JsonObject().put("position", MARKER));
      firstRead.complete(FIRST);
    });
  }

  @Test
  void aPositionBeyondTheHeadOfTheNextReadIsRejected(Vertx vertx, VertxTestContext test) {
    List<String> accepted = new ArrayList<>();
    vertx.runOnContext(started -> {
      ExternalProgress progress = new ExternalProgress(vertx, source, accepted::add, () -> test.verify(() -> {
        assertEquals(List.of(FIRST), accepted);
        test.completeNow();
      }));
      progress.offer(new JsonObject().put("position", FIRST));
      progress.offer(new JsonObject().put("position", BEYOND));
      firstRead.complete(FIRST);
    });
  }

  @Test
  void aFloodOfPositionsBeyondTheHeadNeitherDropsAGenuineOneNorLeavesOneUncounted(Vertx vertx, VertxTestContext test) {
    int bogus = 1_100;
    List<String> accepted = new ArrayList<>();
    int[] rejected = {0};
    // Each rejection is counted before the read that judged it hands on what it accepted.
    Runnable judged = () -> {
      if (rejected[0] == bogus && !accepted.isEmpty()) {
        test.verify(() -> assertEquals(List.of(MARKER), accepted));
        test.completeNow();
      }
    };
    vertx.runOnContext(started -> {
      ExternalProgress progress = new ExternalProgress(vertx, source, position -> {
        accepted.add(position);
        judged.run();
      }, () -> {
        rejected[0]++;
        judged.run();
      });
      progress.offer(new JsonObject().put("position", "7FFFFFFF/FFFFFFFF"));
      // Judged by the second read, which sees the marker: the genuine position amid the flood.
      progress.offer(new JsonObject().put("position", MARKER));
      for (int i = 0; i < bogus - 1; i++) {
        progress.offer(new JsonObject().put("position", String.format("00000001/%08X", i)));
      }
      firstRead.complete(FIRST);
    });
  }

  @Test
  void aBurstOfGenuinePositionsDuringOneReadHasTheGreatestAccepted(Vertx vertx, VertxTestContext test) {
    int burst = 1_100;
    String greatest = String.format("00000000/%08X", burst);
    Promise<String> pending = Promise.promise();
    // The first read took the head before the burst; the next finds it past every position of it.
    ReplicationSource quiet = headsRead(pending.future(), "00000001/00000000");
    vertx.runOnContext(started -> {
      ExternalProgress progress = new ExternalProgress(vertx, quiet, position -> {
        if (position.equals(greatest)) {
          test.completeNow();
        }
      }, () -> { });
      progress.offer(new JsonObject().put("position", "00000000/00000000"));
      for (int i = 1; i <= burst; i++) {
        progress.offer(new JsonObject().put("position", String.format("00000000/%08X", i)));
      }
      pending.complete("00000000/00000000");
    });
  }
}
