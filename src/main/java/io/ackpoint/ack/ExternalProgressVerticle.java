package io.ackpoint.ack;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.config.AckpointConfig.ReplicationConfig;
import io.ackpoint.source.ReplicationSource;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * Progress published by other verticles on {@code ackpoint.replication.progress}: validated
 * ({@link ExternalProgress}), then sent to this node's acknowledgement engine like the follower's
 * positions. Runs where the follower runs: on every standalone Ackpoint, and on the one node of a
 * cluster that holds the follower lock, so that one engine applies each position. Without the
 * built-in follower it also answers for replication's readiness: has progress arrived within
 * {@code replication.progress_timeout}?
 */
public final class ExternalProgressVerticle extends VerticleBase {

  private final ReplicationSource source;
  private final ReplicationConfig replication;
  private final AckListener listener;
  private final AckpointAddresses addresses;

  public ExternalProgressVerticle(ReplicationSource source, ReplicationConfig replication, AckListener listener,
                                  AckpointAddresses addresses) {
    this.source = source;
    this.replication = replication;
    this.listener = listener;
    this.addresses = addresses;
  }

  @Override
  public Future<?> start() {
    var bus = vertx.eventBus();
    Consumer<String> accepted = position -> bus.send(addresses.positionObserved(), position);
    Future<Void> health = Future.succeededFuture();
    if (!replication.follower()) {
      ProgressWatch progress = new ProgressWatch(replication.progressTimeout(), addresses.replicationProgress());
      Consumer<String> engine = accepted;
      accepted = position -> {
        progress.progressed();
        engine.accept(position);
      };
      health = bus.localConsumer(addresses.healthReplication(), msg -> msg.reply(progress.status().toJson())).completion();
      // Looks without being asked too, so that the log tells when progress stopped.
      vertx.setPeriodic(checkInterval(replication.progressTimeout()), id -> progress.status());
    }
    ExternalProgress external = new ExternalProgress(vertx, source, accepted, listener::progressRejected);
    return Future.all(health, bus.consumer(addresses.replicationProgress(), msg -> external.offer(msg.body())).completion());
  }

  private static long checkInterval(Duration timeout) {
    return Math.max(100, Math.min(timeout.toMillis() / 4, 5_000));
  }
}
