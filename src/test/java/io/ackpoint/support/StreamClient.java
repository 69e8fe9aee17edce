package io.ackpoint.support;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.parsetools.RecordParser;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** An open acknowledgement stream over a real socket, read line by line; the test thread awaits lines. */
public final class StreamClient implements AutoCloseable {

  private final HttpClient client;
  /** A line as received and the {@link System#nanoTime()} at which it arrived. */
  public record TimedLine(String text, long arrivedNanos) {
    public JsonObject json() {
      return new JsonObject(text);
    }
  }

  private final BlockingQueue<TimedLine> lines = new LinkedBlockingQueue<>();
  private final HttpClientResponse response;
  private final io.vertx.core.Promise<Void> ended = io.vertx.core.Promise.promise();

  private StreamClient(HttpClient client, HttpClientResponse response) {
    this.client = client;
    this.response = response;
    RecordParser parser = RecordParser.newDelimited("\n", line -> lines.add(new TimedLine(line.toString(), System.nanoTime())));
    response.handler(parser);
    response.endHandler(v -> ended.tryComplete());
    response.exceptionHandler(ended::tryFail);
  }

  /** {@code POST /sync/stream} as the PowerSync client sends it. */
  public static StreamClient syncStream(Vertx vertx, int port, String token, String clientId) {
    return syncStream(vertx, "127.0.0.1", port, token, clientId);
  }

  /** {@code POST /sync/stream} to an Ackpoint at {@code host} (another node, say). */
  public static StreamClient syncStream(Vertx vertx, String host, int port, String token, String clientId) {
    JsonObject body = new JsonObject().put("buckets", new io.vertx.core.json.JsonArray()).put("include_checksum", true)
        .put("raw_data", true).put("client_id", clientId).put("parameters", new JsonObject());
    return open(vertx, new RequestOptions().setMethod(HttpMethod.POST).setPort(port).setHost(host)
        .setURI("/sync/stream")
        .putHeader("Authorization", "Token " + token)
        .putHeader("content-type", "application/json")
        .putHeader("accept", "application/vnd.powersync.bson-stream;q=0.9,application/x-ndjson;q=0.8"), Buffer.buffer(body.encode()));
  }

  public static StreamClient serverSentEvents(Vertx vertx, int port, String token, String clientId) {
    return open(vertx, new RequestOptions().setMethod(HttpMethod.GET).setPort(port).setHost("127.0.0.1")
        .setURI("/sse/checkpoints?client_id=" + clientId)
        .putHeader("Authorization", "Bearer " + token), null);
  }

  private static StreamClient open(Vertx vertx, RequestOptions options, Buffer body) {
    HttpClient client = vertx.createHttpClient();
    HttpClientResponse response = Await.result(client.request(options)
        .compose(req -> body == null ? req.send() : req.send(body))
        .map(resp -> {
          resp.pause();
          return resp;
        }));
    StreamClient stream = new StreamClient(client, response);
    response.resume();
    return stream;
  }

  public int status() {
    return response.statusCode();
  }

  public String header(String name) {
    return response.getHeader(name);
  }

  public String contentType() {
    return response.getHeader("content-type");
  }

  /** The next line, awaited for at most 60 s. */
  public String nextLine() {
    return nextTimed().text();
  }

  /** The next line with its arrival time, awaited for at most 60 s. */
  public TimedLine nextTimed() {
    try {
      TimedLine line = lines.poll(60, TimeUnit.SECONDS);
      if (line == null) {
        throw new AssertionError("no stream line within 60 s");
      }
      return line;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  public JsonObject next() {
    return new JsonObject(nextLine());
  }

  /** Skips lines until one matches (keepalives, say), and answers it; at most 60 s in all. */
  public JsonObject nextMatching(Predicate<JsonObject> predicate) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      try {
        TimedLine line = lines.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        if (line != null && predicate.test(line.json())) {
          return line.json();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
    throw new AssertionError("no matching stream line within 60 s");
  }

  /** Awaits the end of the response, as the server ended it. */
  public void awaitEnd() {
    Await.result(ended.future());
  }

  /** Lines received so far and not yet read. */
  public int buffered() {
    return lines.size();
  }

  @Override
  public void close() {
    Await.result(client.close());
  }
}
