package io.ackpoint.source;

import io.ackpoint.core.CustomCheckpoint;
import io.ackpoint.core.CustomCheckpoints;
import io.ackpoint.AckpointException;
import io.vertx.core.Context;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Hands the custom checkpoints of one committed transaction to the acknowledgement verticle and
 * blocks the follower's worker thread until storage has made them durable. The follower confirms a
 * position to the slot only after this returns, so a row that failed to store is never given up:
 * the follower restarts the stream instead, and the slot sends the transaction again.
 */
final class DurableCustomStore {

  private final EventBus bus;
  private final String address;
  private final Duration timeout;
  private final Duration keepAliveEvery;

  /**
   * {@code timeout}: for each {@link CustomCheckpoints#PER_STATEMENT} checkpoints of a transaction
   * (storage writes them that many per statement, so a bulk transaction takes that much longer).
   * {@code keepAliveEvery}: how often the waiting thread runs its keep-alive.
   */
  DurableCustomStore(EventBus bus, String address, Duration timeout, Duration keepAliveEvery) {
    this.bus = bus;
    this.address = address;
    this.timeout = timeout;
    this.keepAliveEvery = keepAliveEvery;
  }

  /**
   * Returns once the rows are durable; throws if storage failed or did not answer in time.
   * {@code keepAlive} runs every {@code keepAliveEvery} meanwhile: the replication connection
   * waits too, and a server hears nothing from it otherwise (it ends a silent stream after its
   * wal_sender_timeout, which a bulk transaction's store can outlast).
   */
  void store(String position, List<CustomCheckpoint> checkpoints, KeepAlive keepAlive) throws FollowerFailure {
    if (Context.isOnEventLoopThread()) {
      throw new IllegalStateException("custom checkpoints are stored from the follower's worker thread, never an event loop");
    }
    long limit = timeoutFor(checkpoints.size()).toMillis();
    DeliveryOptions options = new DeliveryOptions().setSendTimeout(limit);
    try {
      CompletableFuture<?> stored = bus.request(address, CustomCheckpoints.toJson(position, checkpoints), options)
          .toCompletionStage().toCompletableFuture();
      // The send timeout fails the request first; this bound only guards against a lost reply.
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(limit + 1_000);
      while (true) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new TimeoutException();
        }
        try {
          stored.get(Math.min(left, keepAliveEvery.toNanos()), TimeUnit.NANOSECONDS);
          return;
        } catch (TimeoutException stillStoring) {
          keepAlive.run();
        }
      }
    } catch (ExecutionException e) {
      throw notStored(position, checkpoints, why(e.getCause(), limit), e.getCause());
    } catch (TimeoutException e) {
      throw notStored(position, checkpoints, "no answer within " + limit + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw notStored(position, checkpoints, "interrupted", e);
    } catch (SQLException e) {
      throw notStored(position, checkpoints, "the replication connection failed meanwhile: " + e.getMessage(), e);
    }
  }

  /** {@code custom.store_timeout} for each {@link CustomCheckpoints#PER_STATEMENT} checkpoints, at least once. */
  Duration timeoutFor(int checkpoints) {
    return timeout.multipliedBy(Math.max(1, (checkpoints + CustomCheckpoints.PER_STATEMENT - 1) / CustomCheckpoints.PER_STATEMENT));
  }

  /** What the waiting thread does now and then: tells the replication server it is alive. */
  interface KeepAlive {
    void run() throws SQLException;
  }

  private static String why(Throwable failure, long limit) {
    if (failure instanceof ReplyException reply && reply.failureType() == ReplyFailure.TIMEOUT) {
      return "storage did not confirm them within custom.store_timeout (" + limit + " ms for them)";
    }
    if (failure instanceof ReplyException reply && reply.failureType() == ReplyFailure.NO_HANDLERS) {
      return "the acknowledgement verticle is not running";
    }
    return AckpointException.of(failure).description();
  }

  private static FollowerFailure notStored(String position, List<CustomCheckpoint> checkpoints, String why, Throwable cause) {
    return new FollowerFailure(checkpoints.size() + " custom checkpoint(s) committed at " + position
        + " were not stored (" + why + "); the stream restarts from its last confirmed position,"
        + " so the source sends them again", cause);
  }
}
