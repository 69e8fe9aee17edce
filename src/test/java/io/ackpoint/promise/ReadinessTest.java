package io.ackpoint.promise;

import io.ackpoint.source.Lsn;
import io.ackpoint.support.Await;
import io.ackpoint.support.Readiness;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Readiness is false, with the reason in its body, whenever nothing could be acknowledged: the
 * follower cannot run (slot taken, privilege missing), or, without a follower, no progress arrives.
 */
@ExtendWith(VertxExtension.class)
class ReadinessTest {

  private Vertx vertx;
  private RunningAckpoint app;

  @BeforeEach
  void start(Vertx vertx) {
    this.vertx = vertx;
  }

  @AfterEach
  void stop() {
    if (app != null) {
      app.close();
    }
  }

  private static boolean ready(JsonObject readiness) {
    return readiness.getBoolean("ready");
  }

  @Test
  void aSecondAckpointOnTheSameSlotIsNotReadyAndSaysSoWhileTheFirstStaysReady() {
    app = RunningAckpoint.fresh(vertx, TestAckpoint::withFollower);
    assertTrue(ready(Readiness.probe(app)), "the first Ackpoint follows the slot");

    // Another process (its own Vert.x, so its own event bus) on the same database and slot.
    Vertx otherVertx = Vertx.vertx();
    try (RunningAckpoint second = RunningAckpoint.on(otherVertx, app.database, c -> {
      TestAckpoint.withFollower(c).getJsonObject("replication").put("slot_name", TestAckpoint.slotOf(app.config));
      return c;
    })) {
      JsonObject readiness = Readiness.probe(second);
      assertEquals(false, readiness.getBoolean("ready"), readiness.encode());
      assertEquals(true, readiness.getBoolean("storage"));
      assertEquals(true, readiness.getBoolean("source"));
      assertEquals(false, readiness.getBoolean("replication"));
      String reason = readiness.getString("reason");
      assertTrue(reason.contains("replication slot \"" + TestAckpoint.slotOf(app.config) + "\" is in use by another process"),
          reason);
      assertTrue(reason.contains("another Ackpoint"), reason);

      assertTrue(ready(Readiness.probe(app)), "the first Ackpoint is not disturbed");
    } finally {
      Await.result(otherVertx.close());
    }
  }

  /** A read-only database answers every query and takes no write: no checkpoint can be stored, none acknowledged. */
  @Test
  void aReadOnlyStorageDatabaseIsNotReadyAndSaysSo() {
    app = RunningAckpoint.fresh(vertx, c -> c);
    assertTrue(ready(Readiness.probe(app)));
    String database = app.database.substring(app.database.lastIndexOf('/') + 1);
    try (Sql admin = new Sql(vertx, TestDatabase.freshDatabase())) {
      admin.query("ALTER DATABASE " + database + " SET default_transaction_read_only = on");
      // Ackpoint's pools connect again, and their new sessions take the setting.
      admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", database);
      // Until the pools have connected again, storage does not answer at all.
      JsonObject readiness = Readiness.await(vertx, app, r -> r.getString("reason", "").contains("read-only"));
      assertEquals(false, readiness.getBoolean("ready"), readiness.encode());
      assertEquals(false, readiness.getBoolean("storage"), readiness.encode());

      admin.query("ALTER DATABASE " + database + " RESET default_transaction_read_only");
      admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", database);
      Readiness.await(vertx, app, r -> r.getBoolean("ready"));
    }
  }

  @Test
  void aSlotOfAnotherOutputPluginUnderAckpointsNameIsNotReadyAndSaysWhose() {
    String db = TestDatabase.freshDatabase();
    JsonObject config = TestAckpoint.withFollower(TestAckpoint.configJson(db));
    String slot = TestAckpoint.slotOf(config);
    try (Sql admin = new Sql(vertx, db)) {
      admin.query("SELECT pg_create_logical_replication_slot($1, 'test_decoding')", slot);
      try {
        app = RunningAckpoint.on(vertx, db, c -> config);
        JsonObject readiness = Readiness.await(vertx, app, r -> r.containsKey("reason"));
        assertEquals(false, readiness.getBoolean("replication"), readiness.encode());
        assertTrue(readiness.getString("reason").contains("decodes with the output plugin test_decoding, not pgoutput"),
            readiness.encode());
      } finally {
        if (app != null) {
          app.close();
          app = null;
        }
        admin.query("SELECT pg_drop_replication_slot($1)", slot);
      }
    }
  }

  @Test
  void aSourceRoleWithoutTheReplicationAttributeIsNotReadyAndNamesThePrivilege() {
    String db = TestDatabase.freshDatabase();
    String role = "ackpoint_norepl_" + db.substring(db.lastIndexOf('_') + 1);
    try (Sql admin = new Sql(vertx, db)) {
      // Everything the follower needs except REPLICATION: it may log in and create the publication.
      admin.query("CREATE ROLE " + role + " LOGIN");
      admin.query("GRANT CREATE ON DATABASE " + db.substring(db.lastIndexOf('/') + 1) + " TO " + role);
    }
    try {
      app = RunningAckpoint.on(vertx, db, c -> {
        TestAckpoint.withFollower(c).getJsonObject("source").put("uri", db.replace("postgres@", role + "@"));
        return c;
      });
      JsonObject readiness = Readiness.probe(app);
      assertEquals(false, readiness.getBoolean("ready"), readiness.encode());
      assertEquals(true, readiness.getBoolean("source"), "the role can read the head; it cannot replicate");
      assertEquals(false, readiness.getBoolean("replication"));
      assertTrue(readiness.getString("reason").contains("REPLICATION"), readiness.getString("reason"));
    } finally {
      if (app != null) {
        app.close();
        app = null;
      }
      try (Sql admin = new Sql(vertx, db)) {
        admin.query("DROP OWNED BY " + role);
        admin.query("DROP ROLE " + role);
      }
    }
  }

  @Test
  void withoutAFollowerReadinessTurnsFalseWhenNoProgressArrivesAndTrueAgainWhenItDoes() {
    app = RunningAckpoint.fresh(vertx, c -> {
      c.getJsonObject("replication").put("progress_timeout", "1s");
      return c;
    });
    JsonObject stale = Readiness.await(vertx, app, r -> !ready(r));
    assertEquals(true, stale.getBoolean("storage"));
    assertEquals(true, stale.getBoolean("source"));
    assertEquals(false, stale.getBoolean("replication"));
    assertTrue(stale.getString("reason").contains("progress"), stale.getString("reason"));

    String position = Lsn.format(app.sql.query("SELECT pg_current_wal_lsn()::text").iterator().next().getString(0));
    vertx.eventBus().publish(TestAckpoint.ADDRESSES.replicationProgress(), new JsonObject().put("position", position));
    JsonObject fresh = Readiness.await(vertx, app, ReadinessTest::ready);
    assertEquals(true, fresh.getBoolean("replication"));
  }
}
