package io.ackpoint.http;

import io.ackpoint.config.AckpointConfig.HttpConfig;

/** The request queues of the three route groups, one set per process. */
public record HttpQueues(RequestQueue checkpointing, RequestQueue stream, RequestQueue api) {

  public java.util.List<RequestQueue> all() {
    return java.util.List.of(checkpointing, stream, api);
  }

  public static HttpQueues of(HttpConfig config) {
    return new HttpQueues(
        new RequestQueue("checkpointing", config.checkpointing()),
        new RequestQueue("stream", config.stream()),
        new RequestQueue("api", config.api()));
  }
}
