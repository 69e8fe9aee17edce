package io.ackpoint.batch;

import io.ackpoint.core.CheckpointCommand;
import io.ackpoint.core.CheckpointCreated;
import io.ackpoint.core.CheckpointWrite;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.PendingCheckpoints;
import io.ackpoint.core.PositionFormat;
import io.ackpoint.core.StoredBatch;
import io.ackpoint.core.WriteOutcome;
import io.ackpoint.source.Lsn;
import io.ackpoint.source.ReplicationSource;
import io.ackpoint.storage.CheckpointWriter;
import io.ackpoint.storage.RejectedWriteException;
import io.ackpoint.AckpointError;
import io.ackpoint.AckpointException;
import io.ackpoint.config.AckpointConfig.BatchingConfig;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SPEC section 3, with a source and a storage whose every answer the test controls. */
@ExtendWith(VertxExtension.class)
class CheckpointBatcherTest {

  private static final String HEAD = "00000000/0000A000";

  private final Calls<Void, String> heads = new Calls<>();
  private final Calls<List<CheckpointWrite>, StoredBatch> stores = new Calls<>();
  private final Calls<Void, Void> markers = new Calls<>();
  private final List<String> order = new ArrayList<>();
  private Context context;
  private final AtomicLong clock = new AtomicLong(System.nanoTime());

  private final ReplicationSource source = new ReplicationSource() {
    @Override
    public Future<String> readHead() {
      order.add("head");
      return heads.call(null);
    }

    @Override
    public Future<Void> forceMarker() {
      order.add("marker");
      return markers.call(null);
    }

    @Override
    public PositionFormat positions() {
      return Lsn.FORMAT;
    }
  };

  private final CheckpointWriter storage = (head, writes) -> {
    order.add("store@" + head);
    return stores.call(writes);
  };

  @BeforeEach
  void context(Vertx vertx) {
    context = vertx.getOrCreateContext();
  }

  private CheckpointBatcher batcher(boolean batching) {
    return batcher(new BatchingConfig(batching, 3, 10_000, Duration.ofSeconds(30), Duration.ZERO));
  }

  private CheckpointBatcher batcher(BatchingConfig config) {
    return new CheckpointBatcher(context, source, storage, config, BatchListener.NONE, clock::get);
  }

  private static FullUserId u(String userId) {
    return FullUserId.of(userId, null);
  }

  /** What a storage answers for writes when every stored id is {@code id} and the rows are pending or not. */
  private static StoredBatch stored(List<CheckpointWrite> writes, long id, boolean pending) {
    Map<FullUserId, WriteOutcome> outcomes = new HashMap<>();
    writes.forEach(w -> outcomes.put(w.user(), new WriteOutcome.Stored(id, w.generated() ? id : 0, pending)));
    return new StoredBatch(outcomes, pending);
  }

  /**
   * The acknowledgement engine releases a pending checkpoint as soon as replication passes its head:
   * it learns of each before the batch's callers are answered, and only of those storage gave a head.
   */
  @Test
  void aStoredBatchHandsOnItsPendingCheckpointsWithTheirHeadsBeforeAnsweringItsCallers(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(true);
      List<PendingCheckpoints> released = new ArrayList<>();
      batcher.releaseTo(pending -> {
        released.add(pending);
        order.add("released");
      }, head -> Future.succeededFuture());
      Future<CheckpointCreated> waits = batcher.submit(CheckpointCommand.generated(u("waits")));
      batcher.submit(CheckpointCommand.generated(u("done")));
      batcher.submit(CheckpointCommand.generated(u("headless")));
      heads.next().onComplete(test.succeeding(head -> {
        head.result().complete(HEAD);
        stores.next().onComplete(test.succeeding(store -> {
          store.result().complete(new StoredBatch(Map.of(
              u("waits"), new WriteOutcome.Stored(4, 4, true, HEAD),
              u("done"), new WriteOutcome.Stored(3, 3, false, null),
              u("headless"), new WriteOutcome.Stored(5, 5, true, null)), true));
          markers.next().onComplete(test.succeeding(marker -> marker.result().complete()));
        }));
      }));
      waits.onComplete(test.succeeding(created -> test.verify(() -> {
        assertEquals(1, released.size());
        assertEquals(List.of(new PendingCheckpoints.Pending(u("waits"), 4, HEAD)), released.get(0).checkpoints());
        assertEquals("released", order.get(order.size() - 1), "before the callers are answered: " + order);
        test.completeNow();
      })));
    });
  }

  /**
   * A source that went back (restored, or a standby that was behind took over) gives heads below
   * positions the engine applied: the batch that finds it asks the engine to start over, and the
   * batches' pending checkpoints, which the engine would otherwise take for passed already, are kept
   * back until it has answered.
   */
  @Test
  void aHeadBelowOneReadBeforeAsksTheEngineToStartOverAndWithholdsPendingCheckpointsUntilItAnswered(VertxTestContext test) {
    String before = "00000000/0000B000";
    String back = "00000000/00000100";
    String after = "00000000/00000200";
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(true);
      List<String> released = new ArrayList<>();
      List<String> rewound = new ArrayList<>();
      io.vertx.core.Promise<Void> answer = io.vertx.core.Promise.promise();
      batcher.releaseTo(pending -> released.add(pending.checkpoints().get(0).head()), head -> {
        rewound.add(head);
        return answer.future();
      });
      pendingBatch(batcher, "a", before)
          .compose(a -> pendingBatch(batcher, "b", back))
          .compose(b -> pendingBatch(batcher, "c", after))
          .compose(c -> {
            test.verify(() -> {
              assertEquals(List.of(before), released, "kept back while the engine has not answered");
              assertEquals(List.of(back), rewound);
            });
            answer.complete();
            test.verify(() -> assertEquals(List.of(before, back, after), released, "handed over once it answered"));
            return pendingBatch(batcher, "d", after);
          })
          .onComplete(test.succeeding(d -> test.verify(() -> {
            assertEquals(List.of(before, back, after, after), released);
            assertEquals(List.of(back), rewound, "the heads after it are not a rewind");
            test.completeNow();
          })));
    });
  }

  /** One batch of one generated checkpoint stored pending at {@code head}, its marker written. */
  private Future<CheckpointCreated> pendingBatch(CheckpointBatcher batcher, String user, String head) {
    Future<CheckpointCreated> created = batcher.submit(CheckpointCommand.generated(u(user)));
    heads.next().onSuccess(read -> read.result().complete(head));
    stores.next().onSuccess(store -> store.result().complete(new StoredBatch(
        Map.of(u(user), new WriteOutcome.Stored(1, 1, true, head)), true)));
    markers.next().onSuccess(marker -> marker.result().complete());
    return created;
  }

  @Test
  void requestsOfOneLoopTurnFormOneBatch(VertxTestContext test) {
    List<Future<CheckpointCreated>> results = new ArrayList<>();
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(true);
      for (int i = 0; i < 50; i++) {
        results.add(batcher.submit(CheckpointCommand.generated(u("user-" + i))));
      }
      heads.next().onComplete(test.succeeding(head -> {
        head.result().complete(HEAD);
        stores.next().onComplete(test.succeeding(store -> {
          test.verify(() -> assertEquals(50, store.argument().size()));
          store.result().complete(stored(store.argument(), 1, true));
          markers.next().onComplete(test.succeeding(marker -> marker.result().complete()));
        }));
      }));
      Future.all(results).onComplete(test.succeeding(all -> test.verify(() -> {
        assertEquals(1, heads.count());
        assertEquals(1, stores.count());
        assertEquals(1, markers.count());
        results.forEach(r -> assertEquals(new CheckpointCreated(1, HEAD, true), r.result()));
        test.completeNow();
      })));
    });
  }

  private CheckpointBatcher spacedBatcher(Duration minInterval) {
    return batcher(new BatchingConfig(true, 3, 10_000, Duration.ofSeconds(30), minInterval));
  }

  /**
   * Runs {@code next} on the test's context after every zero-delay timer set so far: Netty runs them
   * in the order they were set, so a batch the batcher dispatches without waiting has started by then.
   */
  private void afterZeroDelayTimers(Runnable next) {
    ((ContextInternal) context).nettyEventLoop().schedule(() -> context.runOnContext(v -> next.run()), 0, TimeUnit.NANOSECONDS);
  }

  /**
   * batching.min_interval: after a batch whose users sent several commands each, commands that come
   * within the interval of its start, in different loop turns, wait for its end and go in one batch
   * (a slot was free all along: three may run). Without the interval the second would have gone
   * alone, in a batch started before the third came.
   */
  @Test
  void afterACoalescedBatchCommandsWithinTheMinIntervalOfItsStartFormOneBatchAcrossLoopTurns(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = spacedBatcher(Duration.ofMillis(300));
      batcher.submit(CheckpointCommand.generated(u("first")));
      batcher.submit(CheckpointCommand.generated(u("first")));
      heads.next().onComplete(test.succeeding(first -> {
        // The clock stands still: every command from here on is within the interval of the first batch's start.
        batcher.submit(CheckpointCommand.generated(u("second")));
        afterZeroDelayTimers(() -> {
          test.verify(() -> assertEquals(1, heads.count(), "no batch started within the interval"));
          batcher.submit(CheckpointCommand.generated(u("third")));
          heads.next().onComplete(test.succeeding(spaced -> {
            spaced.result().complete(HEAD);
            stores.next().onComplete(test.succeeding(store -> test.verify(() -> {
              assertEquals(List.of(u("second"), u("third")), store.argument().stream().map(CheckpointWrite::user).toList());
              test.completeNow();
            })));
          }));
        });
      }));
    });
  }

  /** A command that comes once the interval has passed since a coalesced batch's start waits for no timer but the loop turn's. */
  @Test
  void aBatchAfterAQuietSpellStartsInTheNextLoopTurn(VertxTestContext test) {
    secondBatchStartsInTheNextLoopTurn(test, List.of("first", "first"), Duration.ofSeconds(1));
  }

  /** After a batch of as many rows as commands, the next one starts in the next loop turn, within the interval or not. */
  @Test
  void aBatchAfterOneOfDistinctUsersStartsInTheNextLoopTurn(VertxTestContext test) {
    secondBatchStartsInTheNextLoopTurn(test, List.of("first", "second"), Duration.ZERO);
  }

  /** A first batch of {@code users}' commands, then {@code quiet} later one more command, whose batch starts in the next loop turn. */
  private void secondBatchStartsInTheNextLoopTurn(VertxTestContext test, List<String> users, Duration quiet) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = spacedBatcher(Duration.ofSeconds(1));
      users.forEach(user -> batcher.submit(CheckpointCommand.generated(u(user))));
      heads.next().onComplete(test.succeeding(first -> {
        clock.addAndGet(quiet.toNanos());
        batcher.submit(CheckpointCommand.generated(u("later")));
        afterZeroDelayTimers(() -> {
          test.verify(() -> assertEquals(2, heads.count(), "the second batch started"));
          test.completeNow();
        });
      }));
    });
  }

  @Test
  void aFourthBatchWaitsUntilOneOfThreeCompletes(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(true);
      // Three batches, each started in its own loop turn (after the previous one read its head).
      batcher.submit(CheckpointCommand.generated(u("a")));
      heads.next().compose(first -> {
        batcher.submit(CheckpointCommand.generated(u("b")));
        return heads.next().compose(second -> {
          batcher.submit(CheckpointCommand.generated(u("c")));
          return heads.next().map(third -> List.of(first, second, third));
        });
      }).onComplete(test.succeeding(three -> {
        Future<CheckpointCreated> fourth = batcher.submit(CheckpointCommand.generated(u("d")));
        Future<CheckpointCreated> fifth = batcher.submit(CheckpointCommand.generated(u("e")));
        test.verify(() -> {
          assertEquals(3, batcher.inFlight());
          assertEquals(2, batcher.pending());
          assertEquals(3, heads.count());
        });
        three.get(0).result().complete(HEAD);
        stores.next().onComplete(test.succeeding(store -> {
          store.result().complete(stored(store.argument(), 1, false));
          heads.next().onComplete(test.succeeding(next -> test.verify(() -> {
            // d and e waited together and now run as one batch.
            assertEquals(4, heads.count());
            assertEquals(0, batcher.pending());
            assertFalse(fourth.isComplete() || fifth.isComplete());
            test.completeNow();
          })));
        }));
      }));
    });
  }

  @Test
  void aBatchWhoseStorageSaysNothingIsPendingForcesNoMarker(VertxTestContext test) {
    context.runOnContext(v -> {
      Future<CheckpointCreated> result = batcher(true).submit(CheckpointCommand.requested(u("u/c"), 5));
      heads.next().onComplete(test.succeeding(head -> head.result().complete(HEAD)));
      stores.next().onComplete(test.succeeding(store -> store.result().complete(stored(store.argument(), 7, false))));
      result.onComplete(test.succeeding(created -> test.verify(() -> {
        assertEquals(7, created.writeCheckpoint());
        assertEquals(0, markers.count());
        assertEquals(List.of("head", "store@" + HEAD), order);
        test.completeNow();
      })));
    });
  }

  @Test
  void theMarkerComesAfterStorageAndTheAnswerAfterTheMarker(VertxTestContext test) {
    context.runOnContext(v -> {
      Future<CheckpointCreated> result = batcher(true).submit(CheckpointCommand.requested(u("u/c"), 5));
      heads.next().onComplete(test.succeeding(head -> head.result().complete(HEAD)));
      stores.next().onComplete(test.succeeding(store -> store.result().complete(stored(store.argument(), 5, true))));
      markers.next().onComplete(test.succeeding(marker -> test.verify(() -> {
        assertEquals(List.of("head", "store@" + HEAD, "marker"), order);
        assertFalse(result.isComplete(), "answered before the marker was written");
        marker.result().complete();
      })));
      result.onComplete(test.succeeding(created -> test.completeNow()));
    });
  }

  @Test
  void entriesCollapsePerFullUserIdIntoOneWriteOfBothKinds(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(true);
      batcher.submit(CheckpointCommand.requested(FullUserId.of("u1", "c"), 3));
      batcher.submit(CheckpointCommand.generated(FullUserId.of("u1", "c")));
      batcher.submit(CheckpointCommand.requested(FullUserId.of("u1", "c"), 9));
      batcher.submit(CheckpointCommand.requested(FullUserId.of("u1", "c"), 4));
      batcher.submit(CheckpointCommand.generated(u("u2")));
      batcher.submit(CheckpointCommand.generated(u("u2")));
      heads.next().onComplete(test.succeeding(head -> head.result().complete(HEAD)));
      stores.next().onComplete(test.succeeding(store -> test.verify(() -> {
        assertEquals(List.of(new CheckpointWrite(FullUserId.of("u1", "c"), true, 9L), CheckpointWrite.generated(u("u2"))), store.argument());
        test.completeNow();
      })));
    });
  }

  @Test
  void aStorageErrorFailsEveryRequestOfTheBatchWithoutRetry(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(true);
      List<Future<CheckpointCreated>> results = List.of(
          batcher.submit(CheckpointCommand.generated(u("a"))),
          batcher.submit(CheckpointCommand.requested(u("b"), 2)));
      heads.next().onComplete(test.succeeding(head -> head.result().complete(HEAD)));
      stores.next().onComplete(test.succeeding(store ->
          store.result().fail(AckpointError.STORAGE_UNAVAILABLE.exception(new RuntimeException("connection reset")))));
      Future.join(results).onComplete(done -> test.verify(() -> {
        for (Future<CheckpointCreated> r : results) {
          assertTrue(r.failed());
          assertEquals("ACK_STORAGE_UNAVAILABLE", ((AckpointException) r.cause()).code());
        }
        assertEquals(1, stores.count());
        assertEquals(0, markers.count());
        test.completeNow();
      }));
    });
  }

  @Test
  void aFailedMarkerFailsTheBatch(VertxTestContext test) {
    context.runOnContext(v -> {
      Future<CheckpointCreated> result = batcher(true).submit(CheckpointCommand.generated(u("a")));
      heads.next().onComplete(test.succeeding(head -> head.result().complete(HEAD)));
      stores.next().onComplete(test.succeeding(store -> store.result().complete(stored(store.argument(), 1, true))));
      markers.next().onComplete(test.succeeding(marker ->
          marker.result().fail(AckpointError.SOURCE_UNAVAILABLE.exception(new RuntimeException("gone")))));
      result.onComplete(test.failing(e -> test.verify(() -> {
        assertEquals("ACK_SOURCE_UNAVAILABLE", ((AckpointException) e).code());
        test.completeNow();
      })));
    });
  }

  @Test
  void withBatchingOffEveryRequestIsItsOwnBatch(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(false);
      for (int i = 0; i < 5; i++) {
        batcher.submit(CheckpointCommand.generated(u("same-user")));
      }
      test.verify(() -> assertEquals(5, heads.count()));
      test.completeNow();
    });
  }

  @Test
  void drainedWaitsForTheBatchInFlight(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(true);
      batcher.submit(CheckpointCommand.generated(u("a")));
      Future<Void> drained = batcher.drained();
      heads.next().onComplete(test.succeeding(head -> {
        test.verify(() -> assertFalse(drained.isComplete()));
        head.result().complete(HEAD);
      }));
      stores.next().onComplete(test.succeeding(store -> store.result().complete(stored(store.argument(), 1, false))));
      drained.onComplete(test.succeedingThenComplete());
    });
  }

  @Test
  void generatedRequestsGetTheGeneratedIdAndSuppliedOnesTheStoredIdOfTheSameWrite(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(true);
      Future<CheckpointCreated> generated = batcher.submit(CheckpointCommand.generated(u("u")));
      Future<CheckpointCreated> supplied = batcher.submit(CheckpointCommand.requested(u("u"), 9));
      heads.next().onComplete(test.succeeding(head -> head.result().complete(HEAD)));
      stores.next().onComplete(test.succeeding(store -> store.result().complete(
          new StoredBatch(Map.of(u("u"), new WriteOutcome.Stored(9, 6, true)), false))));
      Future.all(generated, supplied).onComplete(test.succeeding(all -> test.verify(() -> {
        assertEquals(new CheckpointCreated(6, HEAD, true), generated.result());
        assertEquals(new CheckpointCreated(9, HEAD, true), supplied.result());
        test.completeNow();
      })));
    });
  }

  @Test
  void anExhaustedUserFailsOnlyItsGeneratedRequestsWith409(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(true);
      Future<CheckpointCreated> exhausted = batcher.submit(CheckpointCommand.generated(u("max")));
      Future<CheckpointCreated> itsSupplied = batcher.submit(CheckpointCommand.requested(u("max"), 3));
      Future<CheckpointCreated> other = batcher.submit(CheckpointCommand.generated(u("other")));
      heads.next().onComplete(test.succeeding(head -> head.result().complete(HEAD)));
      stores.next().onComplete(test.succeeding(store -> store.result().complete(new StoredBatch(Map.of(
          u("max"), new WriteOutcome.Exhausted(Long.MAX_VALUE, false),
          u("other"), new WriteOutcome.Stored(1, 1, true)), true))));
      markers.next().onComplete(test.succeeding(marker -> marker.result().complete()));
      Future.join(exhausted, itsSupplied, other).onComplete(done -> test.verify(() -> {
        assertEquals("ACK_CHECKPOINT_EXHAUSTED", ((AckpointException) exhausted.cause()).code());
        assertEquals(409, ((AckpointException) exhausted.cause()).status());
        assertEquals(Long.MAX_VALUE, itsSupplied.result().writeCheckpoint());
        assertEquals(1, other.result().writeCheckpoint());
        assertEquals(1, markers.count());
        test.completeNow();
      }));
    });
  }

  @Test
  void aContendedUserFailsAloneAndTheOthersKeepTheirAnswers(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(true);
      Future<CheckpointCreated> contended = batcher.submit(CheckpointCommand.generated(u("hot")));
      Future<CheckpointCreated> other = batcher.submit(CheckpointCommand.generated(u("cold")));
      heads.next().onComplete(test.succeeding(head -> head.result().complete(HEAD)));
      stores.next().onComplete(test.succeeding(store -> store.result().complete(new StoredBatch(Map.of(
          u("hot"), new WriteOutcome.Contended(),
          u("cold"), new WriteOutcome.Stored(4, 4, true)), false))));
      Future.join(contended, other).onComplete(done -> test.verify(() -> {
        assertEquals("ACK_STORAGE_CONTENTION", ((AckpointException) contended.cause()).code());
        assertEquals(4, other.result().writeCheckpoint());
        test.completeNow();
      }));
    });
  }

  @Test
  void dataTheDatabaseRefusesFailsOnlyItsOwnUser(VertxTestContext test) {
    CheckpointWriter picky = (head, writes) -> writes.stream().anyMatch(w -> w.user().equals(u("poison")))
        ? Future.failedFuture(new RejectedWriteException("value too long (54000)", null))
        : Future.succeededFuture(stored(writes, 1, true));
    context.runOnContext(v -> {
      CheckpointBatcher batcher = new CheckpointBatcher(context, source, picky,
          new BatchingConfig(true, 3, 10_000, Duration.ofSeconds(30), Duration.ZERO), BatchListener.NONE);
      List<Future<CheckpointCreated>> fine = new ArrayList<>();
      for (int i = 0; i < 7; i++) {
        fine.add(batcher.submit(CheckpointCommand.generated(u("fine-" + i))));
      }
      Future<CheckpointCreated> poison = batcher.submit(CheckpointCommand.generated(u("poison")));
      heads.next().onComplete(test.succeeding(head -> head.result().complete(HEAD)));
      markers.next().onComplete(test.succeeding(marker -> marker.result().complete()));
      Future.join(new ArrayList<>(fine) {{ add(poison); }}).onComplete(done -> test.verify(() -> {
        assertEquals(422, ((AckpointException) poison.cause()).status());
        assertEquals("ACK_CHECKPOINT_UNSTORABLE", ((AckpointException) poison.cause()).code());
        fine.forEach(f -> assertEquals(1, f.result().writeCheckpoint()));
        assertEquals(1, heads.count(), "one head for the whole batch, split or not");
        test.completeNow();
      }));
    });
  }

  @Test
  void beyondMaxPendingARequestFailsAtOnceWith503(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(new BatchingConfig(true, 1, 2, Duration.ofSeconds(30), Duration.ZERO));
      batcher.submit(CheckpointCommand.generated(u("in-flight")));
      heads.next().onComplete(test.succeeding(head -> {
        // One batch in flight (the limit), two waiting (the limit): the next one is refused.
        batcher.submit(CheckpointCommand.generated(u("w1")));
        batcher.submit(CheckpointCommand.generated(u("w2")));
        batcher.submit(CheckpointCommand.generated(u("refused"))).onComplete(test.failing(e -> test.verify(() -> {
          assertEquals(503, ((AckpointException) e).status());
          assertEquals("ACK_BATCHER_OVERLOADED", ((AckpointException) e).code());
          assertEquals(2, batcher.pending());
          test.completeNow();
        })));
      }));
    });
  }

  /** The commands of one HTTP loop turn are answered together: a refusal must not wait for the others' batch. */
  @Test
  void commandsSubmittedTogetherThatWouldPassMaxPendingAreAllRefusedAtOnce(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(new BatchingConfig(true, 1, 2, Duration.ofSeconds(30), Duration.ZERO));
      batcher.submit(CheckpointCommand.generated(u("in-flight")));
      heads.next().onComplete(test.succeeding(head -> test.verify(() -> {
        batcher.submit(CheckpointCommand.generated(u("waiting")));
        List<Future<CheckpointCreated>> refused = batcher.submitAll(
            List.of(CheckpointCommand.generated(u("a")), CheckpointCommand.generated(u("b"))));
        for (Future<CheckpointCreated> f : refused) {
          assertTrue(f.failed(), "answered before any batch");
          assertEquals("ACK_BATCHER_OVERLOADED", ((AckpointException) f.cause()).code());
        }
        assertEquals(1, batcher.pending());
        List<Future<CheckpointCreated>> admitted = batcher.submitAll(List.of(CheckpointCommand.generated(u("c"))));
        assertFalse(admitted.get(0).isComplete());
        assertEquals(2, batcher.pending());
        test.completeNow();
      })));
    });
  }

  @Test
  void aRequestWhoseCallerStoppedWaitingIsDroppedBeforeStorageSeesIt(VertxTestContext test) {
    context.runOnContext(v -> {
      CheckpointBatcher batcher = batcher(new BatchingConfig(true, 1, 100, Duration.ofSeconds(30), Duration.ZERO));
      batcher.submit(CheckpointCommand.generated(u("first")));
      heads.next().onComplete(test.succeeding(first -> {
        Future<CheckpointCreated> late = batcher.submit(CheckpointCommand.generated(u("late")));
        clock.addAndGet(Duration.ofSeconds(31).toNanos());
        Future<CheckpointCreated> fresh = batcher.submit(CheckpointCommand.generated(u("fresh")));
        first.result().complete(HEAD);
        stores.next().onComplete(test.succeeding(store -> store.result().complete(stored(store.argument(), 1, false))));
        stores.next().onComplete(test.succeeding(second -> test.verify(() -> {
          assertEquals(List.of(CheckpointWrite.generated(u("fresh"))), second.argument(), "only the request still awaited");
          assertEquals("ACK_BATCHER_TIMEOUT", ((AckpointException) late.cause()).code());
          assertFalse(fresh.isComplete());
          test.completeNow();
        })));
        heads.next().onComplete(test.succeeding(head -> head.result().complete(HEAD)));
      }));
    });
  }
}
