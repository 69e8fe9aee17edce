package io.ackpoint.http;

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

  private final Context context;
  private final EventBus eventBus;
  private final String address;
  private final DeliveryOptions options;
  private List<CheckpointCommand> commands = new ArrayList<>();
  private List<Promise<CheckpointCreated>> callers = new ArrayList<>();

  /** Must be created on the event loop of the routes; {@code options} bound the wait for the batcher's answer. */
  CheckpointSubmitter(Context context, EventBus eventBus, String address, DeliveryOptions options) {
    this.context = context;
    this.eventBus = eventBus;
    this.address = address;
    this.options = options;
  }

  Future<CheckpointCreated> submit(CheckpointCommand command) {
    if (commands.isEmpty()) {
      // A task, not the batcher's zero-delay timer: commands come from requests this loop reads, and
      // a task queued now runs after every channel that is ready in this turn has been read, so the
      // turn's requests go together without waiting for the next poll.
      context.runOnContext(v -> send());
    }
    Promise<CheckpointCreated> caller = Promise.promise();
    commands.add(command);
    callers.add(caller);
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
    for (int i = 0; i < callers.size(); i++) {
      CheckpointOutcome outcome = outcomes.get(i);
      if (outcome instanceof CheckpointCreated created) {
        callers.get(i).complete(created);
      } else if (outcome instanceof CheckpointRefused refused) {
        callers.get(i).fail(refused.cause());
      }
    }
  }
}
