package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.ackpoint.AckpointException;
import io.ackpoint.core.CheckpointCommand;
import io.ackpoint.core.CheckpointCommands;
import io.ackpoint.core.CheckpointCreated;
import io.ackpoint.core.CheckpointOutcome;
import io.ackpoint.core.CheckpointOutcomes;
import io.ackpoint.core.CheckpointRefused;
import io.ackpoint.core.FullUserId;
import io.ackpoint.core.LocalCodec;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

@ExtendWith(VertxExtension.class)
class CheckpointSubmitterTest {

  private static final String ADDRESS = "test.checkpoint.submit";

  @Test
  void commandsSubmittedInOneLoopTurnTravelAsOneMessageAndEachGetsItsOwnOutcome(Vertx vertx, VertxTestContext test) {
    List<List<CheckpointCommand>> received = answerEachUserByName(vertx);
    onItsEventLoop(vertx, submitter -> {
      Future<CheckpointCreated> a = submitter.submit(CheckpointCommand.requested(user("a"), 1));
      Future<CheckpointCreated> refused = submitter.submit(CheckpointCommand.generated(user("refused")));
      Future<CheckpointCreated> b = submitter.submit(CheckpointCommand.requested(user("b"), 2));
      Future.join(a, refused, b).onComplete(done -> test.verify(() -> {
        assertEquals(1, received.size(), "one message for the turn");
        assertEquals(List.of("a", "refused", "b"), received.get(0).stream().map(c -> c.user().userId()).toList());
        assertEquals(1, a.result().writeCheckpoint());
        assertEquals(2, b.result().writeCheckpoint());
        assertInstanceOf(AckpointException.class, refused.cause());
        assertEquals(AckpointError.CHECKPOINT_UNSTORABLE, ((AckpointException) refused.cause()).error());
        test.completeNow();
      }));
    });
  }

  @Test
  void commandsOfLaterTurnsTravelInMessagesOfTheirOwn(Vertx vertx, VertxTestContext test) {
    List<List<CheckpointCommand>> received = answerEachUserByName(vertx);
    onItsEventLoop(vertx, submitter -> {
      submitter.submit(CheckpointCommand.requested(user("first"), 1))
          .compose(first -> submitter.submit(CheckpointCommand.requested(user("second"), 2)))
          .onComplete(test.succeeding(second -> test.verify(() -> {
            assertEquals(2, second.writeCheckpoint());
            assertEquals(2, received.size());
            assertEquals(1, received.get(1).size());
            test.completeNow();
          })));
    });
  }

  @Test
  void aMessageThatNothingReceivesFailsEveryCommandOfIt(Vertx vertx, VertxTestContext test) {
    onItsEventLoop(vertx, submitter -> {
      Future<CheckpointCreated> a = submitter.submit(CheckpointCommand.generated(user("a")));
      Future<CheckpointCreated> b = submitter.submit(CheckpointCommand.generated(user("b")));
      Future.join(a, b).onComplete(test.failing(done -> test.verify(() -> {
        assertSame(ReplyFailure.NO_HANDLERS, ((ReplyException) a.cause()).failureType());
        assertSame(ReplyFailure.NO_HANDLERS, ((ReplyException) b.cause()).failureType());
        test.completeNow();
      })));
    });
  }

  @Test
  void withBatchingOffEveryCommandTravelsAlone(Vertx vertx, VertxTestContext test) {
    List<List<CheckpointCommand>> received = answerEachUserByName(vertx);
    onItsEventLoop(vertx, false, submitter -> Future.join(
            submitter.submit(CheckpointCommand.requested(user("a"), 1)),
            submitter.submit(CheckpointCommand.requested(user("b"), 2)))
        .onComplete(test.succeeding(done -> test.verify(() -> {
          assertEquals(2, received.size());
          test.completeNow();
        }))));
  }

  @Test
  void anAnswerThatDoesNotMatchTheCommandsFailsEachOfThemAsInternal(Vertx vertx, VertxTestContext test) {
    DeliveryOptions asOutcomes = LocalCodec.register(vertx, CheckpointOutcomes.class);
    vertx.eventBus().<CheckpointCommands>localConsumer(ADDRESS, msg -> msg.reply(new CheckpointOutcomes(List.of()), asOutcomes));
    onItsEventLoop(vertx, submitter -> submitter.submit(CheckpointCommand.generated(user("a")))
        .onComplete(test.failing(e -> test.verify(() -> {
          assertEquals(AckpointError.INTERNAL, ((AckpointException) e).error());
          test.completeNow();
        }))));
  }

  /** Runs {@code test} on the event loop of a new submitter, as the routes use it. */
  private static void onItsEventLoop(Vertx vertx, Consumer<CheckpointSubmitter> test) {
    onItsEventLoop(vertx, true, test);
  }

  private static void onItsEventLoop(Vertx vertx, boolean perTurn, Consumer<CheckpointSubmitter> test) {
    DeliveryOptions options = LocalCodec.register(vertx, CheckpointCommands.class).setSendTimeout(5_000);
    Context context = vertx.getOrCreateContext();
    context.runOnContext(v -> test.accept(new CheckpointSubmitter(context, vertx.eventBus(), ADDRESS, options, perTurn)));
  }

  /**
   * A batcher that answers each command in order: refused when its user is named "refused", else
   * created with the requested id. Records the commands of each message it receives.
   */
  private static List<List<CheckpointCommand>> answerEachUserByName(Vertx vertx) {
    DeliveryOptions asOutcomes = LocalCodec.register(vertx, CheckpointOutcomes.class);
    List<List<CheckpointCommand>> received = new ArrayList<>();
    vertx.eventBus().<CheckpointCommands>localConsumer(ADDRESS, msg -> {
      received.add(msg.body().commands());
      List<CheckpointOutcome> outcomes = msg.body().commands().stream()
          .map(c -> "refused".equals(c.user().userId())
              ? (CheckpointOutcome) new CheckpointRefused(AckpointError.CHECKPOINT_UNSTORABLE.exception())
              : new CheckpointCreated(c.requestedId() == null ? 0 : c.requestedId(), "0/1", true))
          .toList();
      msg.reply(new CheckpointOutcomes(outcomes), asOutcomes);
    });
    return received;
  }

  private static FullUserId user(String sub) {
    return new FullUserId(sub, "client");
  }
}
