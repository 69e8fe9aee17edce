package io.ackpoint.http;

import java.util.List;

/** Observes the HTTP API (the metrics). */
public interface HttpListener {

  HttpListener NONE = new HttpListener() {
  };

  /** The admission queues of the route groups, to be watched (requests running, waiting, refused). */
  default void queues(List<RequestQueue> queues) {
  }

  /** A request ended with {@code status} after {@code nanos}; {@code route} is its path pattern, or "unmatched". */
  default void request(String route, int status, long nanos) {
  }

  /** A connection was accepted on Ackpoint's own HTTP port. */
  default void connectionOpened() {
  }

  default void connectionClosed() {
  }

  /** A connection was closed as soon as accepted: http.max_connections were open. */
  default void connectionRefused() {
  }

  default void streamOpened() {
  }

  default void streamClosed() {
  }
}
