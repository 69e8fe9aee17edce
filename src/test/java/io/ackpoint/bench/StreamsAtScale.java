package io.ackpoint.bench;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.parsetools.RecordParser;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** Thousands of open acknowledgement streams: what they cost the server, and how fast one ack reaches each. */
final class StreamsAtScale {

  record Result(int streams, long heapBeforeBytes, long heapAfterBytes, double idleCpuPercent, double deliverSeconds,
                int delivered) {
    double heapPerStreamBytes() {
      return (heapAfterBytes - heapBeforeBytes) / (double) streams;
    }
  }

  private StreamsAtScale() {
  }

  static Result measure(Vertx vertx, ServerProcess server, List<String> tokens) throws Exception {
    int n = tokens.size();
    HttpClient client = vertx.createHttpClient(new HttpClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(server.port)
        .setIdleTimeout(0), new PoolOptions().setHttp1MaxSize(n + 512));
    long heapBefore = server.liveHeapBytes();

    CountDownLatch opened = new CountDownLatch(n);
    CountDownLatch acknowledged = new CountDownLatch(n);
    long[] ackedAt = new long[n];
    AtomicInteger inFlight = new AtomicInteger();
    for (int i = 0; i < n; i++) {
      int user = i;
      while (inFlight.get() >= 256) {
        Thread.sleep(1); // pacing the client's connection opens, not waiting for a result
      }
      inFlight.incrementAndGet();
      client.request(new RequestOptions().setMethod(HttpMethod.POST).setURI("/sync/stream")
              .putHeader("Authorization", "Token " + tokens.get(user)).putHeader("content-type", "application/json"))
          .compose(req -> req.send(Buffer.buffer("{\"client_id\":\"s\"}")))
          .onComplete(ar -> inFlight.decrementAndGet())
          .onSuccess(resp -> {
            boolean[] first = {true};
            resp.handler(RecordParser.newDelimited("\n", line -> {
              if (first[0]) {
                first[0] = false;
                opened.countDown();
              } else if (line.toString().contains("\"checkpoint_diff\"")) {
                ackedAt[user] = System.nanoTime();
                acknowledged.countDown();
              }
            }));
          });
    }
    if (!opened.await(5, TimeUnit.MINUTES)) {
      throw new IllegalStateException("only " + (n - opened.getCount()) + " streams opened");
    }
    long heapAfter = server.liveHeapBytes();

    double cpuBefore = Cpu.ofProcess(server.pid());
    long idleStart = System.nanoTime();
    Thread.sleep(5_000); // measuring idle CPU over a fixed window
    double idleCpu = (Cpu.ofProcess(server.pid()) - cpuBefore) / ((System.nanoTime() - idleStart) / 1e9) * 100;

    HttpClient requests = vertx.createHttpClient(new HttpClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(server.port),
        new PoolOptions().setHttp1MaxSize(256));
    long start = System.nanoTime();
    AtomicInteger next = new AtomicInteger();
    for (int window = 0; window < 256; window++) {
      sendNext(requests, tokens, next);
    }
    boolean all = acknowledged.await(5, TimeUnit.MINUTES);
    long last = 0;
    for (long t : ackedAt) {
      last = Math.max(last, t);
    }
    int delivered = (int) (n - acknowledged.getCount());
    client.close();
    requests.close();
    return new Result(n, heapBefore, heapAfter, idleCpu, all ? (last - start) / 1e9 : Double.NaN, delivered);
  }

  /** One checkpoint request per user, 256 in flight at a time. */
  private static void sendNext(HttpClient client, List<String> tokens, AtomicInteger next) {
    int i = next.getAndIncrement();
    if (i >= tokens.size()) {
      return;
    }
    client.request(new RequestOptions().setMethod(HttpMethod.POST).setURI("/sync/checkpoint-request")
            .putHeader("Authorization", "Token " + tokens.get(i)).putHeader("content-type", "application/json"))
        .compose(req -> req.send(Buffer.buffer("{\"client_id\":\"s\",\"checkpoint_request_id\":\"1\"}")))
        .compose(resp -> resp.body())
        .onComplete(ar -> sendNext(client, tokens, next));
  }
}
