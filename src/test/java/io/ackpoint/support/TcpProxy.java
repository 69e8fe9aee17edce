package io.ackpoint.support;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;

import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy between Ackpoint and PostgreSQL, for fault tests. It can cut a connection at the exact
 * moment a client sends given bytes (say, the text of one SQL statement), before they reach the
 * server, so a fault lands in the middle of a chosen operation without any timing guesswork.
 */
public final class TcpProxy {

  private final NetServer server;
  private final NetClient client;
  private final Set<NetSocket> sockets = ConcurrentHashMap.newKeySet();
  private volatile byte[] cutOn;
  private volatile Promise<Void> cut;
  private final AtomicInteger cutsLeft = new AtomicInteger();
  private final OnceSent stall = new OnceSent();
  private volatile boolean frozen;
  private volatile Promise<Void> connected;
  private final OnceSent seen = new OnceSent();

  /** Where new connections go: {@link #retarget} changes it. */
  private volatile String host;
  private volatile int port;

  private TcpProxy(Vertx vertx, String host, int port) {
    this.host = host;
    this.port = port;
    this.client = vertx.createNetClient();
    this.server = vertx.createNetServer().connectHandler(downstream -> {
      downstream.pause();
      Promise<Void> waiting = connected;
      if (waiting != null) {
        waiting.tryComplete();
      }
      client.connect(this.port, this.host).onComplete(ar -> {
        if (ar.failed()) {
          downstream.close();
          return;
        }
        NetSocket upstream = ar.result();
        sockets.add(downstream);
        sockets.add(upstream);
        boolean[] stalled = new boolean[1];
        downstream.handler(data -> {
          if (shouldCut(data)) {
            downstream.close();
            upstream.close();
            return;
          }
          seen.matches(data);
          if (stalled[0] || stall.matches(data)) {
            // Open, yet silent for ever in both directions: a network that drops everything.
            stalled[0] = true;
            return;
          }
          upstream.write(data);
        });
        upstream.handler(data -> {
          if (!stalled[0]) {
            downstream.write(data);
          }
        });
        downstream.closeHandler(v -> {
          sockets.remove(downstream);
          upstream.close();
        });
        upstream.closeHandler(v -> {
          sockets.remove(upstream);
          downstream.close();
        });
        if (frozen) {
          upstream.pause();
        } else {
          downstream.resume();
        }
      });
    });
  }

  public static TcpProxy start(Vertx vertx, String host, int port) {
    return start(vertx, host, port, "127.0.0.1");
  }

  /** A proxy listening on {@code listenHost} (every address with 0.0.0.0: for clients in other network namespaces). */
  public static TcpProxy start(Vertx vertx, String host, int port, String listenHost) {
    TcpProxy proxy = new TcpProxy(vertx, host, port);
    Await.result(proxy.server.listen(0, listenHost));
    return proxy;
  }

  public int port() {
    return server.actualPort();
  }

  /** New connections go to {@code host}:{@code port} from now on (another server took over); open ones stay. */
  public void retarget(String host, int port) {
    this.host = host;
    this.port = port;
  }

  /** The URI of {@code uri}'s database, reached through this proxy. */
  public String proxied(String uri) {
    return uri.replaceFirst("localhost:\\d+", "127.0.0.1:" + port());
  }

  /** Completes when the next client connects (frozen or not: its connect alone has succeeded). */
  public Future<Void> nextConnection() {
    Promise<Void> waiting = Promise.promise();
    connected = waiting;
    return waiting.future();
  }

  /**
   * The next chunk a client sends that contains {@code text} is not forwarded: its connection is cut
   * instead. Completes the returned future when that happened.
   */
  public Future<Void> cutWhenClientSends(String text) {
    return cutWhenClientSends(text, 1);
  }

  /**
   * Like {@link #cutWhenClientSends(String)}, for the next {@code times} chunks that contain
   * {@code text}, each on its own connection; completes when the last was cut.
   */
  public Future<Void> cutWhenClientSends(String text, int times) {
    cut = Promise.promise();
    cutsLeft.set(times);
    cutOn = text.getBytes(StandardCharsets.UTF_8);
    return cut.future();
  }

  /**
   * From the next chunk a client sends that contains {@code text} on, that connection forwards
   * nothing in either direction, but stays open. Completes the returned future when that happened.
   */
  public Future<Void> stallWhenClientSends(String text) {
    return stall.arm(text);
  }

  /** Completes when a client next sends a chunk that contains {@code text}, which is forwarded as any other. */
  public Future<Void> whenClientSends(String text) {
    return seen.arm(text);
  }

  private boolean shouldCut(Buffer data) {
    byte[] pattern = cutOn;
    if (pattern == null || !contains(data.getBytes(), pattern)) {
      return false;
    }
    int left = cutsLeft.decrementAndGet();
    if (left < 0) {
      return false; // a concurrent chunk took the last cut
    }
    if (left == 0) {
      cutOn = null;
      cut.tryComplete();
    }
    return true;
  }

  /** Text a client may send, looked for until it is first seen; completes its future then. */
  private static final class OnceSent {

    private volatile byte[] pattern;
    private volatile Promise<Void> sent;

    Future<Void> arm(String text) {
      sent = Promise.promise();
      pattern = text.getBytes(StandardCharsets.UTF_8);
      return sent.future();
    }

    /** Whether {@code data} is the first chunk since {@link #arm} that contains the text. */
    boolean matches(Buffer data) {
      byte[] looked = pattern;
      if (looked == null || !contains(data.getBytes(), looked)) {
        return false;
      }
      pattern = null;
      sent.tryComplete();
      return true;
    }
  }

  private static boolean contains(byte[] data, byte[] pattern) {
    outer:
    for (int i = 0; i + pattern.length <= data.length; i++) {
      for (int j = 0; j < pattern.length; j++) {
        if (data[i + j] != pattern[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }

  /**
   * Forwards nothing more in either direction, on open connections and new ones alike, yet closes
   * none and drops nothing: what a server stopped whole (SIGSTOP, a paused VM) looks like from the
   * client. New connections are accepted (the kernel's backlog) and wait unanswered.
   */
  public void freeze() {
    frozen = true;
    sockets.forEach(NetSocket::pause);
  }

  /** Forwards again everything held since {@link #freeze()}, as the resumed server would answer it. */
  public void thaw() {
    frozen = false;
    sockets.forEach(NetSocket::resume);
  }

  /** Cuts every open connection, as a database restart or a network failure would. */
  public void cutAll() {
    for (NetSocket socket : Set.copyOf(sockets)) {
      socket.close();
    }
  }

  public void close() {
    cutAll();
    Await.result(server.close());
    Await.result(client.close());
  }
}
