package io.ackpoint.impl;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.ChannelOutputShutdownEvent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Closes a database connection's socket that a live server would have answered by now: once nothing
 * has been read for {@code silenceMillis} since the last thing read or written, and once
 * {@code hangUpMillis} have passed since the client said goodbye without the server hanging up.
 *
 * <p>First in the pipeline from the socket's connect on, so that its close goes straight to the
 * socket: a close from further in passes the PostgreSQL codec, which turns it into a polite
 * Terminate message, shuts the socket's output and waits for the server to hang up, which a server
 * frozen whole never does. Counting from the last write as well as the last read gives a statement
 * sent on a connection that sat idle its whole bound (counted from the last read alone, a
 * connection idle for 14 s was closed 1 s into its next statement).
 */
final class SilenceLimit extends IdleStateHandler {

  static final String NAME = "ackpoint-silence";

  private final long hangUpMillis;
  private ScheduledFuture<?> hardClose;

  SilenceLimit(long silenceMillis, long hangUpMillis) {
    super(silenceMillis, 0, 0, TimeUnit.MILLISECONDS);
    this.hangUpMillis = hangUpMillis;
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
    resetReadTimeout();
    super.write(ctx, msg, promise);
  }

  @Override
  protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent evt) {
    ctx.close();
  }

  /** The codec's goodbye ends by shutting the socket's output: from then on the server has {@code hangUpMillis} to hang up. */
  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof ChannelOutputShutdownEvent && hardClose == null) {
      hardClose = ctx.executor().schedule(() -> {
        ctx.close();
      }, hangUpMillis, TimeUnit.MILLISECONDS);
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    if (hardClose != null) {
      hardClose.cancel(false);
    }
    super.channelInactive(ctx);
  }
}
