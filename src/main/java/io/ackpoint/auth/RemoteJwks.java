package io.ackpoint.auth;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.List;

/**
 * Keys published at a JWKS URI. Fetches are bounded by a timeout and shared while one is in flight;
 * fetches on demand are rate-limited, so a flood of tokens with made-up key ids cannot turn into a
 * flood of requests to the key server, and a slow or dead key server makes unknown keys fail within
 * the timeout while the keys already known keep working. Failures are reported to the listener and
 * logged. Used on one event loop only.
 */
final class RemoteJwks {

  /** A key set of hundreds of RSA keys is tens of KB. */
  static final int MAX_DOCUMENT_BYTES = 1024 * 1024;

  private final HttpClient client;
  private final String uri;
  private final long minFetchNanos;
  private final long timeoutMillis;
  private final JwksListener listener;
  private final FetchFailureLog failureLog;
  private long lastFetchNanos;
  private boolean fetchedOnce;
  private Future<List<JsonObject>> inFlight;

  RemoteJwks(Vertx vertx, String uri, Duration minFetchInterval, Duration timeout, JwksListener listener) {
    this.timeoutMillis = timeout.toMillis();
    this.client = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout((int) timeoutMillis));
    this.uri = uri;
    this.minFetchNanos = minFetchInterval.toNanos();
    this.listener = listener;
    this.failureLog = new FetchFailureLog(vertx, uri);
  }

  /** True when a fetch on demand may go: one is in flight (join it) or the last one is old enough. */
  boolean mayFetch() {
    return inFlight != null || !fetchedOnce || System.nanoTime() - lastFetchNanos >= minFetchNanos;
  }

  /** The keys published now; joins the fetch in flight if there is one. */
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
            return Future.failedFuture("the JWKS endpoint answered " + resp.statusCode());
          }
          return boundedBody(resp);
        })
        .map(body -> {
          JsonObject document = new JsonObject(body);
          List<JsonObject> keys = keysOf(document);
          warnOfShortSecrets(document);
          return keys;
        })
        .onFailure(cause -> {
          listener.jwksFetchFailed();
          failureLog.failed(cause);
        });
    inFlight = fetch;
    return fetch.onComplete(ar -> inFlight = null);
  }

  /**
   * The response's body, failed (and the request reset) once it is larger than a key set has any
   * reason to be: read whole into memory, an endless or huge answer from a misconfigured or hostile
   * endpoint would otherwise take the heap, at every refresh of every event loop.
   */
  private static Future<Buffer> boundedBody(HttpClientResponse resp) {
    if (declaredTooLarge(resp.getHeader(HttpHeaders.CONTENT_LENGTH))) {
      resp.request().reset();
      return Future.failedFuture(tooLarge());
    }
    Promise<Buffer> body = Promise.promise();
    Buffer received = Buffer.buffer();
    resp.handler(chunk -> {
      if (body.future().isComplete()) {
        return;
      }
      if (received.length() + chunk.length() > MAX_DOCUMENT_BYTES) {
        body.fail(tooLarge());
        resp.request().reset();
        return;
      }
      received.appendBuffer(chunk);
    });
    resp.exceptionHandler(body::tryFail);
    resp.endHandler(v -> body.tryComplete(received));
    return body.future();
  }

  private static boolean declaredTooLarge(String contentLength) {
    try {
      return contentLength != null && Long.parseLong(contentLength.trim()) > MAX_DOCUMENT_BYTES;
    } catch (NumberFormatException e) {
      return true;
    }
  }

  private static IllegalStateException tooLarge() {
    return new IllegalStateException("the JWKS document is larger than " + MAX_DOCUMENT_BYTES / 1024 + " KB");
  }

  /** Only an explicit list revokes keys: a document without one (such as {@code {}}) fails the fetch. */
  private static List<JsonObject> keysOf(JsonObject document) {
    if (!document.containsKey("keys")) {
      throw new IllegalArgumentException("not a JWKS: no keys");
    }
    return KeySet.keysOf(document);
  }

  /**
   * An identity provider that publishes a secret too short to be one would otherwise see nothing but
   * its tokens refused ({@link KeySet#keysOf} leaves such a key out).
   */
  private void warnOfShortSecrets(JsonObject document) {
    if (document.getValue("keys") instanceof JsonArray keys) {
      for (Object key : keys) {
        String reason = key instanceof JsonObject jwk ? KeySet.shortSecret(jwk) : null;
        if (reason != null) {
          failureLog.keyLeftOut(((JsonObject) key).getValue("kid") instanceof String id ? "the key " + id : "a key without kid", reason);
        }
      }
    }
  }

  Future<Void> close() {
    return client.close();
  }
}
