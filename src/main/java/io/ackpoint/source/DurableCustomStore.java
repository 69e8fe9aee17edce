package io.ackpoint.source;

import io.ackpoint.core.CustomCheckpoint;
import io.ackpoint.core.CustomCheckpoints;
import io.ackpoint.AckpointException;
import io.vertx.core.Context;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

import java.time.Duration;
import java.util.List;
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

  DurableCustomStore(EventBus bus, String address, Duration timeout) {
    this.bus = bus;
    this.address = address;
    this.timeout = timeout;
  }

  /** Returns once the rows are durable; throws if storage failed or did not answer within the timeout. */
  void store(String position, List<CustomCheckpoint> checkpoints) throws FollowerFailure {
    if (Context.isOnEventLoopThread()) {
      throw new IllegalStateException("custom checkpoints are stored from the follower's worker thread, never an event loop");
    }
    DeliveryOptions options = new DeliveryOptions().setSendTimeout(timeout.toMillis());
    try {
      bus.request(address, CustomCheckpoints.toJson(position, checkpoints), options)
          .toCompletionStage().toCompletableFuture()
          // The send timeout fails the request first; this bound only guards against a lost reply.
          .get(timeout.toMillis() + 1_000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw notStored(position, checkpoints, why(e.getCause()), e.getCause());
    } catch (TimeoutException e) {
      throw notStored(position, checkpoints, "no answer within " + timeout.toMillis() + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw notStored(position, checkpoints, "interrupted", e);
    }
  }

  private String why(Throwable failure) {
    if (failure instanceof ReplyException reply && reply.failureType() == ReplyFailure.TIMEOUT) {
      return "storage did not confirm them within custom.store_timeout (" + timeout.toMillis() + " ms)";
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
