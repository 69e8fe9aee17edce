package io.ackpoint.core;

import java.util.List;

/**
 * The checkpoint commands that one HTTP event loop took in during one loop turn, sent to the batcher
 * as one message: one event-bus delivery, one reply and one reply timer for all of them instead of
 * one each. Answered by {@link CheckpointOutcomes}, one outcome per command, in the same order.
 */
public record CheckpointCommands(List<CheckpointCommand> commands) {

  public CheckpointCommands {
    commands = List.copyOf(commands);
  }
}
