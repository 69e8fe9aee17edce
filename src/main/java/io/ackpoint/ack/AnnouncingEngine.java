package io.ackpoint.ack;

import io.vertx.core.MultiMap;

/**
 * The engine that made an announcement, as its headers tell: its id ({@link StatementNumber}) and
 * the first position it applied. An engine applies positions in increasing order, so everything it
 * marked is at or after its first position; a node that has not heard from it before reads back
 * from there (its first positions may be below what the engine before it announced: a new engine
 * starts from the slot's confirmed position, which lags).
 */
record AnnouncingEngine(String id, String firstPosition) {

  static final String FIRST_POSITION_HEADER = "ackpoint-engine-first-position";

  /** The engine of an announcement, or null if its headers do not say (a node of an older version). */
  static AnnouncingEngine of(MultiMap headers) {
    StatementNumber number = StatementNumber.of(headers);
    String first = headers.get(FIRST_POSITION_HEADER);
    return number == null || first == null ? null : new AnnouncingEngine(number.engine(), first);
  }
}
