package io.ackpoint.core;

/**
 * A command of {@link CheckpointCommands} that got no checkpoint; {@code cause} is what its caller
 * answers (the batcher sends the error catalogue's exceptions). Other commands of the same message
 * keep their own outcomes: one user's failure is never another's.
 */
public record CheckpointRefused(Throwable cause) implements CheckpointOutcome {
}
