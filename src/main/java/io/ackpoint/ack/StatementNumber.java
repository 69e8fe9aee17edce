package io.ackpoint.ack;

import io.vertx.core.MultiMap;

/**
 * The number of an engine's acknowledgement statement, among the statements that engine started,
 * carried in a header: an announcement names the statement that made it, and a release the
 * statement that will record it (the next to start, which sees every batch whose users were
 * released before it started). {@code engine} tells engines apart: numbers of two are not comparable.
 */
record StatementNumber(String engine, long number) {

  static final String HEADER = "ackpoint-statement";

  /** The number a message carries, or null if none (an announcement read back from storage). */
  static StatementNumber of(MultiMap headers) {
    String value = headers.get(HEADER);
    int slash = value == null ? -1 : value.lastIndexOf('/');
    return slash < 0 ? null : new StatementNumber(value.substring(0, slash), Long.parseLong(value.substring(slash + 1)));
  }

  String header() {
    return engine + "/" + number;
  }

  /** Whether the statement numbered {@code by} started no earlier than this one, by the same engine. */
  boolean coveredBy(StatementNumber by) {
    return by != null && engine.equals(by.engine) && number <= by.number;
  }
}
