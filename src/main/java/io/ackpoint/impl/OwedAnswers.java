package io.ackpoint.impl;

import io.netty.buffer.ByteBuf;

/**
 * Whether a PostgreSQL connection is owed an answer, from the bytes that pass its socket: each
 * start-up, simple query and Sync is answered by one ReadyForQuery once the server is done with it
 * (the client pipelines: several may be owed), a request for SSL by one byte. Messages are framed by
 * their length, across reads and writes as they come; the bytes are looked at, not consumed.
 * Bytes that frame as no message of the protocol (a start-up of another protocol version included)
 * leave the count lost: then an answer counts as due for good, so a connection is never taken for
 * idle by mistake.
 */
final class OwedAnswers {

  /** The codes of the messages a client sends before it has started up (no type byte). */
  private static final int START_UP = 196608;
  private static final int SSL_REQUEST = 80877103;
  private static final int GSS_ENCRYPTION_REQUEST = 80877104;
  private static final int CANCEL_REQUEST = 80877102;
  /** PostgreSQL refuses a longer start-up packet. */
  private static final int MAX_UNTYPED_LENGTH = 10_000;

  private final Framer toServer = new Framer(true);
  private final Framer fromServer = new Framer(false);
  private int owed;

  void sent(ByteBuf bytes) {
    toServer.frame(bytes);
  }

  void received(ByteBuf bytes) {
    fromServer.frame(bytes);
  }

  boolean due() {
    return owed > 0 || toServer.lost || fromServer.lost;
  }

  private void onSent(int type, int code) {
    if (type == Framer.UNTYPED) {
      if (code == START_UP) {
        owed++;
        toServer.untyped = false;
      } else if (code == SSL_REQUEST || code == GSS_ENCRYPTION_REQUEST) {
        owed++;
        fromServer.singleByte = true;
      } else if (code != CANCEL_REQUEST) {
        toServer.lost = true;
      }
      // A cancel request is answered by the server hanging up.
    } else if (type == 'Q' || type == 'S' || type == 'F') {
      owed++;
    }
  }

  private void onReceived(int type) {
    if ((type == 'Z' || type == Framer.SINGLE_BYTE) && owed > 0) {
      owed--;
    }
  }

  /** Finds where messages begin in one direction's bytes. */
  private final class Framer {

    static final int UNTYPED = -1;
    static final int SINGLE_BYTE = -2;

    private final boolean client;
    /** The next message has no type byte: a client's first (and its first after a request for SSL). */
    boolean untyped;
    /** The next byte is a message of its own: the server's answer to a request for SSL. */
    boolean singleByte;
    boolean lost;
    private final byte[] header = new byte[8];
    private int headerRead;
    private long skip;

    Framer(boolean client) {
      this.client = client;
      this.untyped = client;
    }

    void frame(ByteBuf bytes) {
      int at = bytes.readerIndex();
      int end = bytes.writerIndex();
      while (at < end && !lost) {
        if (skip > 0) {
          int skipped = (int) Math.min(skip, end - at);
          skip -= skipped;
          at += skipped;
          if (skip == 0) {
            ended();
          }
        } else if (singleByte) {
          singleByte = false;
          at++;
          onReceived(SINGLE_BYTE);
        } else {
          header[headerRead++] = bytes.getByte(at++);
          if (headerRead == (untyped ? 8 : 5)) {
            headerRead = 0;
            long length = untyped ? intAt(0) : intAt(1);
            long counted = untyped ? 8 : 4;
            lost = length < counted || untyped && length > MAX_UNTYPED_LENGTH;
            skip = length - counted;
            if (skip == 0) {
              ended();
            }
          }
        }
      }
    }

    /** A whole message has passed: an answer owed is given once all of it has arrived. */
    private void ended() {
      if (lost) {
        return;
      }
      if (untyped) {
        onSent(UNTYPED, intAt(4));
      } else if (client) {
        onSent(header[0], 0);
      } else {
        onReceived(header[0]);
      }
    }

    private int intAt(int offset) {
      return (header[offset] & 0xff) << 24 | (header[offset + 1] & 0xff) << 16 | (header[offset + 2] & 0xff) << 8
          | header[offset + 3] & 0xff;
    }
  }
}
