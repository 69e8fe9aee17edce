package io.ackpoint.core;

import java.util.List;

/** The batcher's answer to {@link CheckpointCommands}: one outcome per command, in the commands' order. */
public record CheckpointOutcomes(List<CheckpointOutcome> outcomes) {

  public CheckpointOutcomes {
    outcomes = List.copyOf(outcomes);
  }
}
