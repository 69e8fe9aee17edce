package io.ackpoint.auth;

import io.ackpoint.config.DevelopmentKey;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

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

  private final Vertx vertx;
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
    this.vertx = vertx;
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
    Future<List<JsonObject>> fetch = withinTimeout(client.request(request), req -> req.send()
        .compose(resp -> {
          if (resp.statusCode() != 200) {
            return Future.failedFuture("the JWKS endpoint answered " + resp.statusCode());
          }
          return boundedBody(resp);
        }))
        .map(body -> keysOf(new JsonObject(body)))
        .onFailure(cause -> {
          listener.jwksFetchFailed();
          failureLog.failed(cause);
        });
    inFlight = fetch;
    return fetch.onComplete(ar -> inFlight = null);
  }

  /**
   * The answer to {@code request}, failed (and the request reset) once the fetch timeout has passed
   * since it began. The request's idle timeout bounds each wait for a byte, not the whole answer: a
   * server that sent its body a byte a second held a fetch, and with it the start of Ackpoint, for
   * as long as it liked (a hostile test of the key server).
   */
  private Future<Buffer> withinTimeout(Future<HttpClientRequest> request, Function<HttpClientRequest, Future<Buffer>> exchange) {
    Promise<Buffer> answer = Promise.promise();
    AtomicReference<HttpClientRequest> sent = new AtomicReference<>();
    long deadline = vertx.setTimer(timeoutMillis, t -> {
      if (answer.tryFail(new TimeoutException("the JWKS endpoint did not answer in full within " + timeoutMillis + " ms"))) {
        HttpClientRequest req = sent.get();
        if (req != null) {
          req.reset();
        }
      }
    });
    request.compose(req -> {
      if (answer.future().isComplete()) {
        // A connection made after the deadline: its request is never sent.
        req.reset();
        return Future.failedFuture("the JWKS endpoint's connection came after the fetch timeout");
      }
      sent.set(req);
      return exchange.apply(req);
    }).onComplete(ar -> {
      vertx.cancelTimer(deadline);
      if (ar.succeeded()) {
        answer.tryComplete(ar.result());
      } else {
        answer.tryFail(ar.cause());
      }
    });
    return answer.future();
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

  /** A key of a fetched JWKS that verifies no token, and why. */
  record LeftOut(String key, String reason) {
  }

  /**
   * The keys of {@code document} that verify signatures. Only an explicit list revokes keys: a
   * document without one (such as {@code {}}) fails the fetch, and so does a list of entries none of
   * which is such a key ({@code [1, 2]}, {@code [{}]}, encryption keys alone), which took every
   * remote key away; an empty list is a revocation of them all. Entries
   * that cannot verify are left out, as RFC 7517 asks, with a warning; the verifier is never given
   * one (it logged each with a stack trace: tens of MB for a set of thousands).
   */
  private List<JsonObject> keysOf(JsonObject document) {
    if (!document.containsKey("keys")) {
      throw new IllegalArgumentException("not a JWKS: no keys");
    }
    if (!(document.getValue("keys") instanceof JsonArray entries)) {
      throw new IllegalArgumentException("not a JWKS: keys is not a list");
    }
    List<JsonObject> usable = new ArrayList<>();
    List<LeftOut> leftOut = new ArrayList<>();
    for (Object entry : entries) {
      if (KeySet.notForSignatures(entry)) {
        continue;
      }
      // The development key's secret is in Ackpoint's source: published, it would let anyone sign.
      String problem = entry instanceof JsonObject jwk && DevelopmentKey.is(jwk)
          ? "is the development key, whose secret is published with Ackpoint" : KeySet.unusable(entry);
      if (problem == null) {
        usable.add((JsonObject) entry);
      } else {
        leftOut.add(new LeftOut(entry instanceof JsonObject jwk && jwk.getValue("kid") instanceof String id ? "the key " + id
            : "a key without kid", problem));
      }
    }
    if (usable.isEmpty() && !entries.isEmpty()) {
      throw new IllegalArgumentException("not a JWKS of signature keys: none of its " + entries.size() + " entries verifies a token"
          + (leftOut.isEmpty() ? " (all are for encryption)" : " (" + leftOut.get(0).key() + " " + leftOut.get(0).reason() + ")"));
    }
    keysLeftOut("unusable", leftOut);
    return List.copyOf(usable);
  }

  /** Warns of keys published here that verify no token, for a reason of {@code kind} (at most once a minute each). */
  void keysLeftOut(String kind, List<LeftOut> keys) {
    if (!keys.isEmpty()) {
      failureLog.keysLeftOut(kind, keys);
    }
  }

  Future<Void> close() {
    return client.close();
  }
}
