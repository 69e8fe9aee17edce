package io.ackpoint.impl;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Closes a database connection's socket that a live server would have answered by now: once nothing
 * has been read for {@code silenceMillis} since the last thing read or written, and once the server
 * has not hung up in the time its client's shutdown gave it ({@link #awaitHangUp}).
 *
 * <p>Put first in the pipeline as the socket connects, so that its close goes to the socket, not
 * through the PostgreSQL codec: a close from further in is turned by the codec into a polite
 * Terminate message, after which the client shuts its output and waits for the server to hang up,
 * which a server frozen whole never does. (An SSL upgrade puts its handlers before this one; their
 * close sends a close_notify and closes the socket, within Netty's close_notify flush timeout.)
 * Counting from the last write as well as the last read gives a statement sent on a connection that
 * sat idle its whole bound (counted from the last read alone, a connection idle for 14 s was closed
 * 1 s into its next statement).
 */
final class SilenceLimit extends IdleStateHandler {

  static final String NAME = "ackpoint-silence";

  private ChannelHandlerContext ctx;
  private ScheduledFuture<?> hardClose;

  /** {@code silenceMillis} 0: no limit on silence (the hang-up is still bounded). */
  SilenceLimit(long silenceMillis) {
    super(silenceMillis, 0, 0, TimeUnit.MILLISECONDS);
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
    this.ctx = ctx;
    super.handlerAdded(ctx);
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
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    if (hardClose != null) {
      hardClose.cancel(false);
    }
    super.channelInactive(ctx);
  }
}
