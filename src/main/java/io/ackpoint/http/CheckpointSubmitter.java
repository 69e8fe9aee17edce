package io.ackpoint.http;

import io.ackpoint.AckpointError;
import io.ackpoint.core.CheckpointCommand;
import io.ackpoint.core.CheckpointCommands;
import io.ackpoint.core.CheckpointCreated;
import io.ackpoint.core.CheckpointOutcome;
import io.ackpoint.core.CheckpointOutcomes;
import io.ackpoint.core.CheckpointRefused;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.internal.ContextInternal;

import java.util.ArrayList;
import java.util.List;

/**
 * Hands one event loop's checkpoint commands to the batcher: those submitted in one loop turn travel
 * as one {@link CheckpointCommands} message. Per request, the event bus's delivery, reply handler,
 * reply timer and metrics cost a sixth of Ackpoint's CPU under load (async-profiler); per turn they
 * cost next to nothing. The batcher groups the messages of all event loops as it grouped requests.
 * All methods run on the event loop of the routes, so nothing here needs a lock.
 */
final class CheckpointSubmitter {

  private final ContextInternal context;
  private final EventBus eventBus;
  private final String address;
  private final DeliveryOptions options;
  private final boolean perTurn;
  private List<CheckpointCommand> commands = new ArrayList<>();
  private List<Promise<CheckpointCreated>> callers = new ArrayList<>();

  /**
   * Must be created on the event loop of the routes; {@code options} bound the wait for the batcher's
   * answer. {@code perTurn} false (the no-batching baseline, {@code batching.enabled: false}): every
   * command travels alone, as each is its own batch, and no answer waits for another's.
   */
  CheckpointSubmitter(Context context, EventBus eventBus, String address, DeliveryOptions options, boolean perTurn) {
    this.context = (ContextInternal) context;
    this.eventBus = eventBus;
    this.address = address;
    this.options = options;
    this.perTurn = perTurn;
  }

  Future<CheckpointCreated> submit(CheckpointCommand command) {
    // A promise of the loop's context: an exception in one caller's callback is reported there and
    // cannot keep the callers after it from their answers.
    Promise<CheckpointCreated> caller = context.promise();
    commands.add(command);
    callers.add(caller);
    if (!perTurn) {
      send();
    } else if (commands.size() == 1) {
      // A task: it runs once every channel ready in this turn has been read (Netty reads them all,
      // then runs its tasks), so the turn's requests go in one message. Unlike the batcher's
      // zero-delay timer, it never waits for the next poll, even when a task (a request let in from
      // its route's queue) submitted the first command: the batcher will wait for that poll anyway.
      context.runOnContext(v -> send());
    }
    return caller.future();
  }

  private void send() {
    List<Promise<CheckpointCreated>> answered = callers;
    CheckpointCommands message = new CheckpointCommands(commands);
    commands = new ArrayList<>();
    callers = new ArrayList<>();
    eventBus.<CheckpointOutcomes>request(address, message, options).onComplete(ar -> answer(answered, ar));
  }

  /** Each caller gets its own command's outcome; only a failure of the message itself (no batcher, no answer in time) is everyone's. */
  private static void answer(List<Promise<CheckpointCreated>> callers, AsyncResult<Message<CheckpointOutcomes>> reply) {
    if (reply.failed()) {
      callers.forEach(caller -> caller.fail(reply.cause()));
      return;
    }
    List<CheckpointOutcome> outcomes = reply.result().body().outcomes();
    if (outcomes.size() != callers.size()) {
      callers.forEach(caller -> caller.fail(AckpointError.INTERNAL.exception(
          "the batcher answered " + outcomes.size() + " outcomes for " + callers.size() + " commands")));
      return;
    }
    for (int i = 0; i < callers.size(); i++) {
      if (outcomes.get(i) instanceof CheckpointCreated created) {
        callers.get(i).complete(created);
      } else {
        callers.get(i).fail(((CheckpointRefused) outcomes.get(i)).cause());
      }
    }
  }
}
