package io.ackpoint.auth;

import io.vertx.core.Vertx;
import io.vertx.core.shareddata.LocalMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Warns that a JWKS URI cannot be fetched, or that a key it publishes is left out, at most once a
 * minute per URI (and key) for a whole Vert.x instance:
 * every HTTP verticle fetches on its own, and an endpoint that stays down must neither go unnoticed
 * nor fill the log.
 */
final class FetchFailureLog {

  private static final Logger LOG = LoggerFactory.getLogger(FetchFailureLog.class);
  private static final long QUIET_NANOS = TimeUnit.MINUTES.toNanos(1);
  /** Keys named in one warning; a set of thousands is counted, not listed. */
  private static final int NAMED = 3;

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

  /**
   * Keys of a fetched JWKS that are left out (they verify nothing), and why: a few named, the rest
   * counted. Each {@code kind} of reason has its own minute, so that one does not silence another.
   */
  void keysLeftOut(String kind, List<RemoteJwks.LeftOut> keys) {
    if (mayWarn(uri + " keys left out: " + kind)) {
      String named = keys.stream().limit(NAMED).map(k -> k.key() + " that " + k.reason()).collect(Collectors.joining("; "));
      String more = keys.size() > NAMED ? " (and " + (keys.size() - NAMED) + " more)" : "";
      LOG.warn("the JWKS from {} has {}{}: left out, it verifies no token (this warning repeats at most once a minute)",
          uri, named, more);
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
