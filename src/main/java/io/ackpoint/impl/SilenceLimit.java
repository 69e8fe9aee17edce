package io.ackpoint.impl;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Closes a database connection's socket that a live server would have answered by now: once an
 * answer is owed ({@link OwedAnswers}) and nothing has been read for {@code silenceMillis} since the
 * last thing read or written, and once the server has not hung up in the time its client's shutdown
 * gave it ({@link #awaitHangUp}).
 *
 * <p>Put first in the pipeline as the socket connects, so that its close goes to the socket, not
 * through the PostgreSQL codec: a close from further in is turned by the codec into a polite
 * Terminate message, after which the client shuts its output and waits for the server to hang up,
 * which a server frozen whole never does. (An SSL upgrade puts its handlers before this one; their
 * close sends a close_notify and closes the socket, within Netty's close_notify flush timeout. This
 * one sees the bytes in the clear.) Counting from the last write as well as the last read gives a
 * statement sent on a connection that sat idle its whole bound (counted from the last read alone, a
 * connection idle for 14 s was closed 1 s into its next statement). A connection that is owed
 * nothing is idle, not silent: it stays open (it used to be closed after the bound, so a pool
 * opened its connections again, each a new server process, every time traffic resumed), and its
 * socket's keepalive finds a peer that vanished meanwhile.
 */
final class SilenceLimit extends ChannelDuplexHandler {

  static final String NAME = "ackpoint-silence";

  private final long silenceNanos;
  private final OwedAnswers answers = new OwedAnswers();
  private ChannelHandlerContext ctx;
  private long lastTraffic;
  /** Scheduled while an answer is owed (and there is a limit). */
  private ScheduledFuture<?> silenceCheck;
  private ScheduledFuture<?> hardClose;

  /** {@code silenceMillis} 0: no limit on silence (the hang-up is still bounded). */
  SilenceLimit(long silenceMillis) {
    this.silenceNanos = TimeUnit.MILLISECONDS.toNanos(silenceMillis);
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    lastTraffic = now();
  }

  /** The event loop's clock, which its timers keep. */
  private long now() {
    return ctx.executor().ticker().nanoTime();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    lastTraffic = now();
    if (msg instanceof ByteBuf bytes) {
      answers.received(bytes);
    }
    ctx.fireChannelRead(msg);
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    lastTraffic = now();
    if (msg instanceof ByteBuf bytes) {
      answers.sent(bytes);
    }
    if (silenceNanos > 0 && silenceCheck == null && answers.due() && ctx.channel().isActive()) {
      silenceCheck = ctx.executor().schedule(this::checkSilence, silenceNanos, TimeUnit.NANOSECONDS);
    }
    ctx.write(msg, promise);
  }

  /** Ends once nothing is owed: an idle connection has no timer to wake it. */
  private void checkSilence() {
    silenceCheck = null;
    if (!answers.due() || !ctx.channel().isOpen()) {
      return;
    }
    long silent = now() - lastTraffic;
    if (silent >= silenceNanos) {
      ctx.close();
    } else {
      silenceCheck = ctx.executor().schedule(this::checkSilence, silenceNanos - silent, TimeUnit.NANOSECONDS);
    }
  }

  /**
   * On the socket's event loop: the server has {@code millis} to hang up, then the socket is closed.
   * Once only: the first bound set stays.
   */
  void awaitHangUp(long millis) {
    if (hardClose == null && ctx.channel().isOpen()) {
      hardClose = ctx.executor().schedule(() -> {
        ctx.close();
      }, millis, TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (hardClose != null) {
      hardClose.cancel(false);
    }
    if (silenceCheck != null) {
      silenceCheck.cancel(false);
    }
    ctx.fireChannelInactive();
  }
}
