package io.ackpoint.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A database server frozen whole, as a client sees it: the kernel still accepts connections and
 * takes their bytes, but nothing is ever read, answered or hung up. The test proxy's freeze cannot
 * stand in for it: the proxy still sees a client close its end, and closes its own.
 */
public final class SilentServer implements AutoCloseable {

  private final ServerSocket listener;
  private final List<Socket> held = new CopyOnWriteArrayList<>();
  private final CompletableFuture<Void> firstBytes = new CompletableFuture<>();

  private SilentServer(ServerSocket listener) {
    this.listener = listener;
    Thread acceptor = new Thread(this::holdConnections, "silent-server");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public static SilentServer start() {
    try {
      return new SilentServer(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A PostgreSQL URI that names this server. */
  public String postgresUri() {
    return "postgresql://ackpoint:ackpoint@127.0.0.1:" + listener.getLocalPort() + "/ackpoint";
  }

  /**
   * Completes once a client has connected and sent a byte: then it is connected on its side too, and
   * has begun to talk. Nothing more is read.
   */
  public CompletableFuture<Void> firstBytes() {
    return firstBytes;
  }

  private void holdConnections() {
    try {
      while (true) {
        Socket socket = listener.accept();
        held.add(socket);
        if (socket.getInputStream().read() >= 0) {
          firstBytes.complete(null);
        }
      }
    } catch (IOException closed) {
      // The listener was closed: the test is over.
    }
  }

  @Override
  public void close() {
    IOException failed = null;
    try {
      listener.close();
    } catch (IOException e) {
      failed = e;
    }
    for (Socket socket : held) {
      try {
        socket.close();
      } catch (IOException e) {
        failed = e;
      }
    }
    if (failed != null) {
      throw new UncheckedIOException(failed);
    }
  }
}
