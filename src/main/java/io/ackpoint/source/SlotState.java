package io.ackpoint.source;

/**
 * A replication slot as the source sees it: the position it confirmed, the WAL it holds back from
 * recycling (bytes from its restart position to the source's head), and how far its confirmed
 * position trails the head (bytes).
 */
public record SlotState(String slot, String confirmedPosition, long retainedBytes, long lagBytes) {
}
