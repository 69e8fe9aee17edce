package io.ackpoint.bench;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.parsetools.RecordParser;


import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Thousands of open acknowledgement streams: what they cost the server, and how fast one
 * acknowledgement reaches each. Two ways: one replication position that acknowledges a checkpoint
 * of every stream's user at once (the checkpoints written straight into storage, then one marker:
 * the fan-out alone), {@link #FAN_OUTS} times in a row, since the first runs code the JIT has not
 * compiled yet; and one checkpoint request per user through the API, 256 at a time (end to end:
 * requests, batches, positions and fan-out).
 */
final class StreamsAtScale {

  static final int FAN_OUTS = 3;

  /** {@code fanOutSeconds}: one per fan-out, in order, NaN where not every stream was reached ({@code fannedOut}: the fewest reached). */
  record Result(int streams, long heapBeforeBytes, long heapAfterBytes, double idleCpuPercent, List<Double> fanOutSeconds,
                int fannedOut, double deliverSeconds, int delivered) {
    double heapPerStreamBytes() {
      return (heapAfterBytes - heapBeforeBytes) / (double) streams;
    }
  }

  /** Queues the rows {@code w} wrote, as storage does for the rows a batch makes pending. */
  private static final String QUEUE = "INSERT INTO ackpoint_pending (id, head) SELECT id, lsns->>'1' FROM w";

  private StreamsAtScale() {
  }

  /** {@code tokens}: one per stream, the i-th with sub {@code userPrefix + i}, users no earlier run had. */
  static Result measure(Vertx vertx, ServerProcess server, String uri, String userPrefix, List<String> tokens) throws Exception {
    int n = tokens.size();
    HttpClient client = vertx.createHttpClient(new HttpClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(server.port)
        .setIdleTimeout(0), new PoolOptions().setHttp1MaxSize(n + 512));
    long heapBefore = server.liveHeapBytes();

    CountDownLatch opened = new CountDownLatch(n);
    CountDownLatch[] fannedOut = new CountDownLatch[FAN_OUTS];
    long[][] fannedOutAt = new long[FAN_OUTS][n];
    for (int round = 0; round < FAN_OUTS; round++) {
      fannedOut[round] = new CountDownLatch(n);
    }
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
                return;
              }
              int id = writeCheckpoint(line.toString());
              if (id >= 1 && id <= FAN_OUTS) {
                fannedOutAt[id - 1][user] = System.nanoTime();
                fannedOut[id - 1].countDown();
              } else if (id == FAN_OUTS + 1) {
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

    List<Double> fanOutSeconds = new ArrayList<>();
    long fewestFannedOut = n;
    for (int round = 0; round < FAN_OUTS; round++) {
      long fanOutStart = writeAndMark(uri, userPrefix, n, round + 1);
      boolean all = fannedOut[round].await(5, TimeUnit.MINUTES);
      fanOutSeconds.add(all ? (last(fannedOutAt[round]) - fanOutStart) / 1e9 : Double.NaN);
      fewestFannedOut = Math.min(fewestFannedOut, n - fannedOut[round].getCount());
    }

    HttpClient requests = vertx.createHttpClient(new HttpClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(server.port),
        new PoolOptions().setHttp1MaxSize(256));
    long start = System.nanoTime();
    AtomicInteger next = new AtomicInteger();
    for (int window = 0; window < 256; window++) {
      sendNext(requests, tokens, next);
    }
    boolean all = acknowledged.await(5, TimeUnit.MINUTES);
    client.close();
    requests.close();
    return new Result(n, heapBefore, heapAfter, idleCpu, fanOutSeconds, (int) fewestFannedOut,
        all ? (last(ackedAt) - start) / 1e9 : Double.NaN, (int) (n - acknowledged.getCount()));
  }

  private static long last(long[] times) {
    long last = 0;
    for (long t : times) {
      last = Math.max(last, t);
    }
    return last;
  }

  /** The {@code write_checkpoint} of a stream line, 0 if it has none. */
  private static int writeCheckpoint(String line) {
    String key = "\"write_checkpoint\":\"";
    int at = line.indexOf(key);
    if (at < 0) {
      return 0;
    }
    int from = at + key.length();
    return Integer.parseInt(line.substring(from, line.indexOf('"', from)));
  }

  /**
   * Checkpoint {@code id} of every stream's user, pending at the current head, written straight into
   * storage, then one marker after their commit: the next position acknowledges all of them at once.
   * Answers when the marker was committed.
   */
  private static long writeAndMark(String uri, String userPrefix, int n, int id) throws Exception {
    try (Connection c = PgJdbc.connect(uri); Statement s = c.createStatement()) {
      String head = "jsonb_build_object('1', (SELECT lpad(split_part(l, '/', 1), 8, '0') || '/'"
          + " || lpad(split_part(l, '/', 2), 8, '0') FROM (SELECT pg_current_wal_lsn()::text) w(l)))";
      if (id == 1) {
        s.execute("WITH w AS (INSERT INTO ackpoint_write_checkpoints (user_id, client_id, write_checkpoint, lsns, checkpoint_requested_at)"
            + " SELECT '" + userPrefix + "' || g, 's', 1, " + head + ", now() FROM generate_series(0, " + (n - 1) + ") g"
            + " RETURNING id, lsns) " + QUEUE);
      } else {
        s.execute("WITH w AS (UPDATE ackpoint_write_checkpoints SET write_checkpoint = " + id + ", lsns = " + head
            + ", processed_at_lsn = NULL, checkpoint_requested_at = now()"
            + " WHERE starts_with(user_id, '" + userPrefix + "') AND client_id = 's' RETURNING id, lsns) " + QUEUE);
      }
      s.execute("SELECT pg_logical_emit_message(true, 'ackpoint', 'bench')");
      return System.nanoTime();
    }
  }

  /** One checkpoint request per user, 256 in flight at a time. */
  private static void sendNext(HttpClient client, List<String> tokens, AtomicInteger next) {
    int i = next.getAndIncrement();
    if (i >= tokens.size()) {
      return;
    }
    client.request(new RequestOptions().setMethod(HttpMethod.POST).setURI("/sync/checkpoint-request")
            .putHeader("Authorization", "Token " + tokens.get(i)).putHeader("content-type", "application/json"))
        .compose(req -> req.send(Buffer.buffer("{\"client_id\":\"s\",\"checkpoint_request_id\":\"" + (FAN_OUTS + 1) + "\"}")))
        .compose(resp -> resp.body())
        .onComplete(ar -> sendNext(client, tokens, next));
  }
}
