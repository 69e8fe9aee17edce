package io.ackpoint.bench;

import io.ackpoint.config.AckpointConfig.EmbeddedConfig;
import io.ackpoint.embedded.EmbeddedDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.parsetools.RecordParser;
import io.vertx.ext.auth.JWTOptions;
import io.vertx.ext.auth.jwt.JWTAuth;
import io.vertx.ext.auth.jwt.JWTAuthOptions;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * scripts/soak: mixed checkpoint traffic and thousands of open streams against an Ackpoint process,
 * with PostgreSQL restarted periodically; at the end every checkpoint that got a 200 must have been
 * acknowledged on its user's stream. Loopback only, bounded in time.
 */
public final class Soak {

  public static void main(String[] args) throws Exception {
    int minutes = 3;
    int streams = 2000;
    int restartEverySeconds = 45;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--minutes" -> minutes = Integer.parseInt(args[++i]);
        case "--streams" -> streams = Integer.parseInt(args[++i]);
        case "--restart-every" -> restartEverySeconds = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    int lost = new Soak().run(minutes, streams, restartEverySeconds);
    System.exit(lost == 0 ? 0 : 1);
  }

  private final Vertx vertx = Vertx.vertx();
  private final Map<String, AtomicLong> errors = new ConcurrentHashMap<>();
  private final AtomicLong served = new AtomicLong();

  private int run(int minutes, int users, int restartEverySeconds) throws Exception {
    int pgPort;
    try (ServerSocket s = new ServerSocket(0)) {
      pgPort = s.getLocalPort();
    }
    EmbeddedConfig database = new EmbeddedConfig(Files.createTempDirectory("ackpoint-soak-pg"), pgPort);
    EmbeddedDatabase[] postgres = {EmbeddedDatabase.start(database)};
    Map<String, String> env = Map.of(
        "ACKPOINT_CONFIG", "conf/ackpoint.yaml",
        "ACKPOINT_SOURCE_TYPE", "postgresql", "ACKPOINT_SOURCE_URI", postgres[0].uri(),
        "ACKPOINT_STORAGE_TYPE", "postgresql", "ACKPOINT_STORAGE_URI", postgres[0].uri(),
        "ACKPOINT_REPLICATION_HEARTBEAT_INTERVAL", "5s");
    JWTAuth signer = JWTAuth.create(vertx, new JWTAuthOptions().addJwk(new JsonObject()
        .put("kty", "oct").put("kid", "dev").put("alg", "HS256").put("k", "iJoVKTbQkCatM5bOb3GMzH-irPqiv-EwBnI_6EVtkv0")));
    String[] tokens = new String[users];
    long now = Instant.now().getEpochSecond();
    for (int i = 0; i < users; i++) {
      tokens[i] = signer.generateToken(new JsonObject().put("sub", "soak-" + i).put("aud", "ackpoint").put("iat", now)
          .put("exp", now + 3 * 3600), new JWTOptions().setHeader(new JsonObject().put("kid", "dev")).setNoTimestamp(true));
    }
    AtomicLongArray expected = new AtomicLongArray(users);
    AtomicLongArray acknowledged = new AtomicLongArray(users);
    AtomicLongArray nextId = new AtomicLongArray(users);

    try (ServerProcess server = ServerProcess.start("soak", 18180, env)) {
      long heapBefore = server.liveHeapBytes();
      HttpClient streamClient = vertx.createHttpClient(new HttpClientOptions().setDefaultHost("127.0.0.1")
          .setDefaultPort(server.port).setIdleTimeout(0), new PoolOptions().setHttp1MaxSize(users + 16));
      for (int i = 0; i < users; i++) {
        int user = i;
        streamClient.request(new RequestOptions().setMethod(HttpMethod.POST).setURI("/sync/stream")
                .putHeader("Authorization", "Token " + tokens[user]).putHeader("content-type", "application/json"))
            .compose(req -> req.send(Buffer.buffer("{\"client_id\":\"s\"}")))
            .onSuccess(resp -> resp.handler(RecordParser.newDelimited("\n", line -> {
              JsonObject json = new JsonObject(line);
              JsonObject body = json.containsKey("checkpoint") ? json.getJsonObject("checkpoint") : json.getJsonObject("checkpoint_diff");
              if (body != null && body.getString("write_checkpoint") != null) {
                acknowledged.accumulateAndGet(user, Long.parseLong(body.getString("write_checkpoint")), Math::max);
              }
            })))
            .onFailure(e -> error("stream open: " + e.getClass().getSimpleName()));
      }

      HttpClient requests = vertx.createHttpClient(new HttpClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(server.port),
          new PoolOptions().setHttp1MaxSize(64));
      AtomicBoolean running = new AtomicBoolean(true);
      for (int w = 0; w < 64; w++) {
        send(requests, tokens, expected, nextId, running);
      }
      long end = System.nanoTime() + minutes * 60_000_000_000L;
      long nextRestart = System.nanoTime() + restartEverySeconds * 1_000_000_000L;
      int restarts = 0;
      while (System.nanoTime() < end) {
        Thread.sleep(500); // the soak's own clock: it runs for a fixed time by design
        if (System.nanoTime() >= nextRestart) {
          postgres[0].close();
          postgres[0] = EmbeddedDatabase.start(database);
          restarts++;
          System.out.println("PostgreSQL restarted (" + restarts + ")");
          nextRestart = System.nanoTime() + restartEverySeconds * 1_000_000_000L;
        }
      }
      running.set(false);
      long settle = System.nanoTime() + 90_000_000_000L;
      int missing = missing(expected, acknowledged);
      while (missing > 0 && System.nanoTime() < settle) {
        Thread.sleep(500); // acknowledgements still in flight after the traffic stopped
        missing = missing(expected, acknowledged);
      }
      long heapAfter = server.liveHeapBytes();
      int withWrites = 0;
      for (int i = 0; i < users; i++) {
        if (expected.get(i) > 0) {
          withWrites++;
        }
      }
      System.out.printf("soak: %d min, %d streams, %d PostgreSQL restarts%n", minutes, users, restarts);
      System.out.printf("requests served (200): %d%n", served.get());
      System.out.printf("errors by kind: %s%n", new TreeMap<>(errors));
      System.out.printf("acknowledgements expected: %d users, received: %d, lost: %d%n", withWrites, withWrites - missing, missing);
      System.out.printf("Ackpoint live heap: %.1f MB before, %.1f MB after%n", heapBefore / 1e6, heapAfter / 1e6);
      streamClient.close();
      requests.close();
      return missing;
    } finally {
      postgres[0].close();
      vertx.close();
    }
  }

  private static int missing(AtomicLongArray expected, AtomicLongArray acknowledged) {
    int missing = 0;
    for (int i = 0; i < expected.length(); i++) {
      if (acknowledged.get(i) < expected.get(i)) {
        missing++;
      }
    }
    return missing;
  }

  private void error(String kind) {
    errors.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
  }

  /** One worker: checkpoint requests with growing ids for random users, as long as the soak runs. */
  private void send(HttpClient client, String[] tokens, AtomicLongArray expected, AtomicLongArray nextId, AtomicBoolean running) {
    if (!running.get()) {
      return;
    }
    int user = ThreadLocalRandom.current().nextInt(tokens.length);
    long id = nextId.incrementAndGet(user);
    client.request(new RequestOptions().setMethod(HttpMethod.POST).setURI("/sync/checkpoint-request")
            .putHeader("Authorization", "Token " + tokens[user]).putHeader("content-type", "application/json"))
        .compose(req -> req.send(Buffer.buffer("{\"client_id\":\"s\",\"checkpoint_request_id\":\"" + id + "\"}")))
        .compose(resp -> resp.body().map(body -> {
          if (resp.statusCode() == 200) {
            served.incrementAndGet();
            long answered = Long.parseLong(new JsonObject(body).getJsonObject("data").getString("checkpoint_request_id"));
            expected.accumulateAndGet(user, answered, Math::max);
          } else {
            error("HTTP " + resp.statusCode() + " " + new JsonObject(body).getJsonObject("error").getString("code"));
          }
          return null;
        }))
        .onFailure(e -> error("client: " + e.getClass().getSimpleName()))
        .onComplete(ar -> send(client, tokens, expected, nextId, running));
  }
}
