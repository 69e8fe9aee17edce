package io.ackpoint.core;

/** What became of one command of {@link CheckpointCommands}: its checkpoint, or why it has none. */
public sealed interface CheckpointOutcome permits CheckpointCreated, CheckpointRefused {
}
