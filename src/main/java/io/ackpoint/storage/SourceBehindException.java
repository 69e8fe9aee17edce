package io.ackpoint.storage;

/**
 * A position was to be applied on a database that is the source too, and whose head is before it:
 * replication passed that position on a server this one is not, since every position is written to
 * the source before it is replicated. The source went back (restored to an earlier point, or
 * replaced by a server that was behind). Nothing was marked.
 */
public final class SourceBehindException extends RuntimeException {

  private final String head;

  public SourceBehindException(String position, String head) {
    super("the source went back: its head " + head + " is before position " + position
        + ", which replication had passed (restored to an earlier point, or replaced by a server that was behind)", null, false, false);
    this.head = head;
  }

  /** The source's head when the position was refused. */
  public String head() {
    return head;
  }
}
