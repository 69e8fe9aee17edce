package io.ackpoint.auth;

import io.vertx.core.Vertx;
import io.vertx.core.shareddata.LocalMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;

/**
 * Warns that a JWKS URI cannot be fetched, or that a key it publishes is left out, at most once a
 * minute per URI (and key) for a whole Vert.x instance:
 * every HTTP verticle fetches on its own, and an endpoint that stays down must neither go unnoticed
 * nor fill the log.
 */
final class FetchFailureLog {

  private static final Logger LOG = LoggerFactory.getLogger(FetchFailureLog.class);
  private static final long QUIET_NANOS = TimeUnit.MINUTES.toNanos(1);

  private final String uri;
  /** URI → System.nanoTime() of its last warning, shared by the verticles of one Vert.x instance. */
  private final LocalMap<String, Long> lastWarnings;

  FetchFailureLog(Vertx vertx, String uri) {
    this.uri = uri;
    this.lastWarnings = vertx.sharedData().getLocalMap("ackpoint.auth.jwks-warnings");
  }

  void failed(Throwable cause) {
    if (mayWarn(uri)) {
      String reason = cause.getMessage() == null ? cause.getClass().getName() : cause.getMessage();
      LOG.warn("fetching the JWKS from {} failed: {}; the keys already known stay in use until a fetch succeeds"
          + " (this warning repeats at most once a minute)", uri, reason);
    }
  }

  /** A key of a fetched JWKS that is left out (it verifies nothing), and why. */
  void keyLeftOut(String key, String reason) {
    if (mayWarn(uri + " " + key)) {
      LOG.warn("the JWKS from {} has {} that {}: it verifies no token (this warning repeats at most once a minute)",
          uri, key, reason);
    }
  }

  /** Of the verticles that warn at once, only the one that moves the timestamp of {@code subject} warns. */
  private boolean mayWarn(String subject) {
    long now = System.nanoTime();
    Long last = lastWarnings.get(subject);
    if (last != null && now - last < QUIET_NANOS) {
      return false;
    }
    return last == null ? lastWarnings.putIfAbsent(subject, now) == null : lastWarnings.replaceIfPresent(subject, last, now);
  }
}
