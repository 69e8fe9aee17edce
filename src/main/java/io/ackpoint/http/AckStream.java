package io.ackpoint.http;

import io.vertx.core.http.HttpServerResponse;

import java.util.function.Consumer;

/**
 * One open acknowledgement stream. Acknowledgements that arrive before the opening lines are kept
 * (only the greatest matters) and written right after them: the stream subscribes before it reads
 * the user's latest acknowledged id, so nothing can slip between the read and the subscription.
 *
 * <p>Invariant: the {@code write_checkpoint} a stream sends never decreases. An acknowledgement is
 * written only if its id is greater than the last one written; an early one that the opening line
 * already covers, or one of an older install's duplicate rows, is dropped. Nor does its
 * {@code last_op_id}: a sequence below one already written (a lagging follower's position after the
 * node's floor, an early acknowledgement numbered before the opening line) is written as the last one.
 */
final class AckStream implements AckSubscriber {

  private final HttpServerResponse response;
  private final StreamFormat format;
  private final long expiresAtMillis;
  private final long keepaliveMillis;
  private final Consumer<AckStream> onEnd;
  private long nextKeepaliveMillis;
  private boolean opened;
  private boolean ended;
  private Long sent;
  private long sequence;
  private String sentCheckpoint;
  private Long early;
  private String earlyCheckpoint;

  AckStream(HttpServerResponse response, StreamFormat format, long expiresAtMillis, long keepaliveMillis,
            Consumer<AckStream> onEnd) {
    this.response = response;
    this.format = format;
    this.expiresAtMillis = expiresAtMillis;
    this.keepaliveMillis = keepaliveMillis;
    this.onEnd = onEnd;
    this.nextKeepaliveMillis = System.currentTimeMillis() + keepaliveMillis;
  }

  void open(String checkpoint, Long writeCheckpoint) {
    if (ended) {
      return;
    }
    opened = true;
    sent = writeCheckpoint;
    write(format.first(monotonic(checkpoint), writeCheckpoint));
    if (early != null) {
      reached(early, earlyCheckpoint);
      early = null;
    }
  }

  @Override
  public void reached(long writeCheckpoint, String checkpoint) {
    if (ended) {
      return;
    }
    if (!opened) {
      if (early == null || writeCheckpoint > early) {
        early = writeCheckpoint;
        earlyCheckpoint = checkpoint;
      }
      return;
    }
    if (sent != null && writeCheckpoint <= sent) {
      return;
    }
    sent = writeCheckpoint;
    write(format.acknowledged(monotonic(checkpoint), writeCheckpoint));
  }

  private String monotonic(String checkpoint) {
    long number = Long.parseLong(checkpoint);
    if (number >= sequence) {
      sequence = number;
      sentCheckpoint = checkpoint;
    }
    return sentCheckpoint;
  }

  @Override
  public void tick(long nowMillis) {
    if (nowMillis >= expiresAtMillis) {
      if (opened) {
        // Tells a PowerSync client to fetch new credentials now rather than after a failed reconnect.
        write(format.keepalive(0));
      }
      end();
    } else if (opened && nowMillis >= nextKeepaliveMillis) {
      nextKeepaliveMillis = nowMillis + keepaliveMillis;
      // Rounded up: 0 means expired, which the last keepalive before expiry is not yet.
      write(format.keepalive((expiresAtMillis - nowMillis + 999) / 1000));
    }
  }

  private void write(String text) {
    if (response.closed()) {
      end();
      return;
    }
    // A client that does not read its stream is dropped rather than buffered without bound.
    if (response.writeQueueFull()) {
      response.reset();
      end();
      return;
    }
    response.write(text);
  }

  void end() {
    if (ended) {
      return;
    }
    ended = true;
    onEnd.accept(this);
    if (!response.closed() && !response.ended()) {
      response.end();
    }
  }
}
