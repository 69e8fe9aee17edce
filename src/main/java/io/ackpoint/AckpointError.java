package io.ackpoint;

import io.vertx.core.Future;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every error Ackpoint answers, once: its stable code, the HTTP status it is answered with (also the
 * failure code of an event-bus reply), and a default description. Code throughout Ackpoint raises
 * these, never a bare status or code string.
 */
public enum AckpointError {

  BAD_REQUEST(400, "ACK_BAD_REQUEST", "the request could not be read"),
  INVALID_JSON(400, "ACK_INVALID_JSON", "the request body must be a JSON object"),
  INVALID_QUERY(400, "ACK_INVALID_QUERY", "the query string is not well-formed percent-encoded UTF-8"),
  INVALID_CHECKPOINT_REQUEST_ID(400, "ACK_INVALID_CHECKPOINT_REQUEST_ID", "checkpoint_request_id is invalid"),
  INVALID_CLIENT_ID(400, "ACK_INVALID_CLIENT_ID", "client_id is invalid"),
  INVALID_USER_ID(400, "ACK_INVALID_USER_ID", "user_id must be a non-empty string"),
  INVALID_WAIT(400, "ACK_INVALID_WAIT", "wait must be a whole number of seconds"),

  AUTH_MISSING(401, "ACK_AUTH_MISSING", "no Authorization header with a Token or Bearer credential"),
  AUTH_MALFORMED(401, "ACK_AUTH_MALFORMED", "the token is not a well-formed JWT"),
  AUTH_UNSUPPORTED_ALGORITHM(401, "ACK_AUTH_UNSUPPORTED_ALGORITHM", "the token's algorithm is not accepted"),
  AUTH_UNKNOWN_KEY(401, "ACK_AUTH_UNKNOWN_KEY", "the token's key id is not among the configured keys"),
  AUTH_BAD_SIGNATURE(401, "ACK_AUTH_BAD_SIGNATURE", "the token's signature does not verify"),
  AUTH_EXPIRED(401, "ACK_AUTH_EXPIRED", "the token has expired or has no exp claim"),
  AUTH_NOT_YET_VALID(401, "ACK_AUTH_NOT_YET_VALID", "the token is not valid yet"),
  AUTH_TOO_LONG_LIVED(401, "ACK_AUTH_TOO_LONG_LIVED", "the token is valid for longer than auth.max_token_lifetime allows"),
  AUTH_WRONG_AUDIENCE(401, "ACK_AUTH_WRONG_AUDIENCE", "the token's audience is not accepted"),
  AUTH_INVALID_SUBJECT(401, "ACK_AUTH_INVALID_SUBJECT", "the token's sub must be a non-empty string that storage can hold"),
  ADMIN_UNAUTHORIZED(401, "ACK_ADMIN_UNAUTHORIZED", "a valid admin token is required"),
  ADMIN_DISABLED(403, "ACK_ADMIN_DISABLED", "admin routes are disabled: set admin.token"),
  FORBIDDEN(403, "ACK_FORBIDDEN", "the request is not allowed"),
  NOT_FOUND(404, "ACK_NOT_FOUND", "no such route"),
  METHOD_NOT_ALLOWED(405, "ACK_METHOD_NOT_ALLOWED", "method not allowed on this route"),
  CHECKPOINT_EXHAUSTED(409, "ACK_CHECKPOINT_EXHAUSTED",
      "the checkpoint id of this user and client is 9223372036854775807: no greater id can be generated"),
  CUSTOM_CHECKPOINT_MODE(409, "ACK_CUSTOM_CHECKPOINT_MODE",
      "checkpoints.mode is custom: checkpoint ids are written by the application into its checkpoint table"),
  PAYLOAD_TOO_LARGE(413, "ACK_PAYLOAD_TOO_LARGE", "the request body is too large"),
  URI_TOO_LONG(414, "ACK_URI_TOO_LONG", "the request line is too long"),
  UNSUPPORTED_MEDIA_TYPE(415, "ACK_UNSUPPORTED_MEDIA_TYPE", "the request body must be application/json"),
  EXPECTATION_FAILED(417, "ACK_EXPECTATION_FAILED", "the only expectation accepted is 100-continue"),
  CHECKPOINT_UNSTORABLE(422, "ACK_CHECKPOINT_UNSTORABLE", "checkpoint storage refused this user's checkpoint"),
  TOO_MANY_REQUESTS(429, "ACK_TOO_MANY_REQUESTS", "too many concurrent requests, retry later"),
  BODY_TOO_SLOW(408, "ACK_BODY_TOO_SLOW", "the request's body did not arrive within twice http.idle_timeout of its head"),
  HEADERS_TOO_LARGE(431, "ACK_HEADERS_TOO_LARGE", "the request headers are too large"),
  INTERNAL(500, "ACK_INTERNAL", "internal error"),
  TRANSFER_CODING_NOT_IMPLEMENTED(501, "ACK_TRANSFER_CODING_NOT_IMPLEMENTED", "the only transfer coding accepted for a request body is chunked"),
  STORAGE_UNAVAILABLE(503, "ACK_STORAGE_UNAVAILABLE", "checkpoint storage is unavailable"),
  STORAGE_TIMEOUT(503, "ACK_STORAGE_TIMEOUT", "the checkpoint batch did not complete in time"),
  STORAGE_CONTENTION(503, "ACK_STORAGE_CONTENTION", "checkpoint storage is too contended for this user, retry"),
  SOURCE_UNAVAILABLE(503, "ACK_SOURCE_UNAVAILABLE", "the source database is unavailable"),
  BATCHER_OVERLOADED(503, "ACK_BATCHER_OVERLOADED", "too many checkpoint requests are waiting for a batch, retry later"),
  BATCHER_TIMEOUT(503, "ACK_BATCHER_TIMEOUT", "the checkpoint request waited too long for a batch"),
  UNAVAILABLE(503, "ACK_UNAVAILABLE", "an Ackpoint component did not answer"),
  REPLICATION_TIMEOUT(504, "ACK_REPLICATION_TIMEOUT", "replication did not reach the checkpoint in time");

  private static final Map<String, AckpointError> BY_CODE = new HashMap<>();

  static {
    for (AckpointError e : values()) {
      BY_CODE.put(e.code, e);
    }
  }

  private final int status;
  private final String code;
  private final String description;

  AckpointError(int status, String code, String description) {
    this.status = status;
    this.code = code;
    this.description = description;
  }

  /** The HTTP status, also the failure code of an event-bus reply. */
  public int status() {
    return status;
  }

  public String code() {
    return code;
  }

  public String description() {
    return description;
  }

  /** The error of {@code code}, or {@link #INTERNAL} for a code this version does not know. */
  public static AckpointError ofCode(String code) {
    return BY_CODE.getOrDefault(code, INTERNAL);
  }

  public AckpointException exception() {
    return new AckpointException(this, description, null);
  }

  public AckpointException exception(String description) {
    return new AckpointException(this, description, null);
  }

  /**
   * {@code operation}, any failure of which becomes this error, caused by it; a failure that is
   * already an Ackpoint error (one of the steps said what went wrong) is passed on as it is, so that
   * nested operations never wrap a description twice.
   */
  public <T> Future<T> onFailure(Future<T> operation) {
    return operation.recover(e -> Future.failedFuture(e instanceof AckpointException known ? known : exception(e)));
  }

  /** This error, caused by {@code cause}, whose message is added to the description. */
  public AckpointException exception(Throwable cause) {
    String detail = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
    Matcher nativeCall = NATIVE_CALL_FAILED.matcher(detail);
    return new AckpointException(this, description + ": " + (nativeCall.matches() ? nativeCall.group(1) : detail), cause);
  }

  /**
   * How Netty's native transport words a failed system call, {@code recvAddress(..) failed with
   * error(-104): Connection reset by peer}: the call and the errno say nothing to a client or an
   * operator that the text after them does not.
   */
  private static final Pattern NATIVE_CALL_FAILED = Pattern.compile("\\w+\\(\\.\\.\\) failed(?: with error\\(-?\\d+\\))?: (.+)", Pattern.DOTALL);
}
