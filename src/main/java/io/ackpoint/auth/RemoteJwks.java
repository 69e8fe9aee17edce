package io.ackpoint.auth;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Keys published at a JWKS URI. Fetches are bounded by a timeout and rate-limited, so a flood of
 * tokens with made-up key ids cannot turn into a flood of requests to the key server, and a slow or
 * dead key server makes unknown keys fail fast while the keys already cached keep working.
 */
final class RemoteJwks {

  private static final long MIN_REFRESH_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(30);
  private static final long FETCH_TIMEOUT_MS = 5_000;

  private final HttpClient client;
  private final String uri;
  private long lastFetchNanos;
  private boolean fetchedOnce;

  RemoteJwks(Vertx vertx, String uri) {
    this.client = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout((int) FETCH_TIMEOUT_MS));
    this.uri = uri;
  }

  boolean mayRefresh() {
    return !fetchedOnce || System.nanoTime() - lastFetchNanos >= MIN_REFRESH_INTERVAL_NANOS;
  }

  Future<List<JsonObject>> fetch() {
    fetchedOnce = true;
    lastFetchNanos = System.nanoTime();
    RequestOptions request = new RequestOptions()
        .setMethod(HttpMethod.GET)
        .setAbsoluteURI(uri)
        .setIdleTimeout(FETCH_TIMEOUT_MS)
        .putHeader("accept", "application/json");
    return client.request(request)
        .compose(req -> req.send())
        .compose(resp -> {
          if (resp.statusCode() != 200) {
            return Future.failedFuture("JWKS endpoint answered " + resp.statusCode());
          }
          return resp.body();
        })
        .map(body -> KeySet.keysOf(new JsonObject(body)));
  }
}
