package io.ackpoint.compaction;

import io.ackpoint.support.TestAckpoint;
import io.ackpoint.source.Lsn;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.AckpointExtension;
import io.ackpoint.support.TestKeys;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.ackpoint.support.ApiClient.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SPEC sections 6 and 8: compaction keeps storage bounded without losing a checkpoint anyone waits for. */
@ExtendWith(VertxExtension.class)
class CompactionTest {

  @RegisterExtension
  final AckpointExtension app = AckpointExtension.with(config -> config
        .put("checkpoints", new JsonObject().put("request_retention", "1h"))
        .put("compaction", new JsonObject().put("interval", "1h").put("batch_size", 2))
        .put("admin", new JsonObject().put("token", ADMIN)));
  private final String token = TestKeys.token("u");

  private static final String ADMIN = "admin-secret";

  /** Every checkpoint so far is processed, as if replication had passed them. */
  private void replicationPassesEverything() {
    String lsn = Lsn.format(app.sql().query("SELECT pg_current_wal_lsn()::text").iterator().next().getString(0));
    app.sql().query("UPDATE ackpoint_write_checkpoints SET processed_at_lsn = $1 WHERE processed_at_lsn IS NULL", lsn);
  }

  /** Ages the row of user u's client {@code clientId}. */
  private void age(String clientId, String interval) {
    app.sql().query("UPDATE ackpoint_write_checkpoints SET checkpoint_requested_at = now() - ($2::text)::interval"
        + " WHERE user_id = 'u' AND client_id = $1", clientId, interval);
  }

  private HttpResponse<Buffer> compact(String adminToken) {
    return compactAuthorized(adminToken == null ? null : "Bearer " + adminToken);
  }

  private HttpResponse<Buffer> compactAuthorized(String authorization) {
    var request = app.api().request(HttpMethod.POST, "/admin/compact");
    if (authorization != null) {
      request.putHeader("Authorization", authorization);
    }
    return ApiClient.send(request, null);
  }

  private boolean exists(String clientId) {
    return app.sql().count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE user_id = 'u' AND client_id = $1", clientId) > 0;
  }

  @Test
  void expiredProcessedRequestsGoAndEverythingElseStays() {
    app.api().checkpointRequest(token, "expired", "3");
    app.api().checkpointRequest(token, "fresh", "3");
    app.api().writeCheckpoint2(token, "generated");
    replicationPassesEverything();
    app.api().checkpointRequest(token, "pending", "3");
    age("expired", "2 hours");
    age("pending", "2 hours");
    app.sql().query("UPDATE ackpoint_write_checkpoints SET checkpoint_requested_at = NULL WHERE user_id = 'u/generated'");

    JsonObject report = data(compact(ADMIN));
    assertEquals(1, report.getLong("deleted"));
    assertEquals(3, report.getLong("remaining"));
    assertTrue(!exists("expired") && exists("fresh") && exists("generated") && exists("pending"));
  }

  @Test
  void generatedRowsAreNeverDeletedHoweverOld() {
    app.api().writeCheckpoint2(token, "old");
    replicationPassesEverything();
    // A generated row carries no request time at all: nothing can make it look expired.
    assertEquals(0, app.sql().count("SELECT count(*) FROM ackpoint_write_checkpoints WHERE checkpoint_requested_at IS NOT NULL"));
    assertEquals(0, data(compact(ADMIN)).getLong("deleted"));
    assertTrue(exists("old"));
  }

  @Test
  void anEqualRetryRefreshesTheRetentionAndAStaleOneDoesNot() {
    app.api().checkpointRequest(token, "retried", "5");
    app.api().checkpointRequest(token, "stale", "5");
    replicationPassesEverything();
    age("retried", "2 hours");
    age("stale", "2 hours");
    app.api().checkpointRequest(token, "retried", "5");
    app.api().checkpointRequest(token, "stale", "4");
    assertEquals(1, data(compact(ADMIN)).getLong("deleted"));
    assertTrue(exists("retried"));
    assertTrue(!exists("stale"));
  }

  @Test
  void deletesRunInBoundedBatches() {
    for (int i = 0; i < 5; i++) {
      app.api().checkpointRequest(token, "c" + i, "1");
    }
    replicationPassesEverything();
    app.sql().query("UPDATE ackpoint_write_checkpoints SET checkpoint_requested_at = now() - interval '1 day'");
    JsonObject report = data(compact(ADMIN));
    assertEquals(5, report.getLong("deleted"));
    assertEquals(3, report.getInteger("batches"), "batch_size 2: 2 + 2 + 1");
    assertEquals(0, report.getLong("remaining"));
  }

  @Test
  void theAdminRouteNeedsTheAdminToken() {
    assertEquals(401, compact(null).statusCode());
    assertEquals(401, compact("wrong").statusCode());
    assertEquals(401, compact(token).statusCode(), "a user's JWT is not an admin token");
    assertEquals("Bearer", compact("wrong").getHeader("WWW-Authenticate"));
  }

  @Test
  void theAdminTokenBesideAnotherAuthorizationHeaderIsRefused() {
    var request = app.api().request(HttpMethod.POST, "/admin/compact");
    request.headers().add("Authorization", "Bearer " + ADMIN).add("Authorization", "Bearer wrong");
    assertEquals(401, ApiClient.send(request, null).statusCode());
  }

  /** The scheme as the client routes take it (RFC 9110): any case, one or more spaces, nothing else after the token. */
  @Test
  void theAdminSchemeIsReadAsTheClientRoutesReadTheirs() {
    assertEquals(200, compactAuthorized("bearer " + ADMIN).statusCode());
    assertEquals(200, compactAuthorized("Bearer   " + ADMIN).statusCode());
    assertEquals(401, compactAuthorized("Bearer " + ADMIN + " extra").statusCode());
  }

  @Test
  void compactionRunsOnTheEventBusToo() {
    app.api().checkpointRequest(token, "bus", "1");
    replicationPassesEverything();
    age("bus", "3 hours");
    JsonObject report = Await.result(app.vertx().eventBus().<JsonObject>request(TestAckpoint.ADDRESSES.compactionRun(), null)).body();
    assertEquals(1, report.getLong("deleted"));
  }
}
