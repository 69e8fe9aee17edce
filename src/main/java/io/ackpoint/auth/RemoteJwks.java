package io.ackpoint.auth;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.List;

/**
 * Keys published at a JWKS URI. Fetches are bounded by a timeout, shared while one is in flight, and
 * rate-limited, so a flood of tokens with made-up key ids cannot turn into a flood of requests to
 * the key server, and a slow or dead key server makes unknown keys fail within the timeout while the
 * keys already known keep working. Used on one event loop only.
 */
final class RemoteJwks {

  private final HttpClient client;
  private final String uri;
  private final long minRefreshNanos;
  private final long timeoutMillis;
  private long lastFetchNanos;
  private boolean fetchedOnce;
  private Future<List<JsonObject>> inFlight;

  RemoteJwks(Vertx vertx, String uri, Duration minRefresh, Duration timeout) {
    this.timeoutMillis = timeout.toMillis();
    this.client = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout((int) timeoutMillis));
    this.uri = uri;
    this.minRefreshNanos = minRefresh.toNanos();
  }

  /** True when a fetch is in flight (join it) or the last one is old enough to fetch again. */
  boolean mayRefresh() {
    return inFlight != null || !fetchedOnce || System.nanoTime() - lastFetchNanos >= minRefreshNanos;
  }

  Future<List<JsonObject>> fetch() {
    if (inFlight != null) {
      return inFlight;
    }
    fetchedOnce = true;
    lastFetchNanos = System.nanoTime();
    RequestOptions request = new RequestOptions()
        .setMethod(HttpMethod.GET)
        .setAbsoluteURI(uri)
        .setIdleTimeout(timeoutMillis)
        .putHeader("accept", "application/json");
    Future<List<JsonObject>> fetch = client.request(request)
        .compose(req -> req.send())
        .compose(resp -> {
          if (resp.statusCode() != 200) {
            return Future.failedFuture("JWKS endpoint answered " + resp.statusCode());
          }
          return resp.body();
        })
        .map(body -> KeySet.keysOf(new JsonObject(body)));
    inFlight = fetch;
    return fetch.onComplete(ar -> inFlight = null);
  }
}
