package io.ackpoint.fault;

import io.ackpoint.Ackpoint;
import io.ackpoint.config.AckpointConfig.EmbeddedConfig;
import io.ackpoint.embedded.EmbeddedDatabase;
import io.ackpoint.support.ApiClient;
import io.ackpoint.support.Await;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static io.ackpoint.support.ApiClient.data;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A replication slot that the source invalidated (it held back more WAL than
 * {@code max_slot_wal_keep_size} allows, as while Ackpoint was down) is created again by the next
 * follower, and checkpoints are acknowledged again without an operator. On a server of its own: the
 * setting is the server's.
 */
@ExtendWith(VertxExtension.class)
class InvalidatedSlotTest {

  private static String walStatus(Sql sql, String slot) {
    var rows = sql.query("SELECT wal_status FROM pg_replication_slots WHERE slot_name = $1", slot);
    return rows.size() == 0 ? null : rows.iterator().next().getString(0);
  }

  private static boolean acknowledged(ApiClient api, String token, String id) {
    return data(api.checkpointRequestAwaiting(token, new JsonObject().put("client_id", "c").put("checkpoint_request_id", id).encode(), 30))
        .getBoolean("acknowledged");
  }

  @Test
  void aSlotTheSourceInvalidatedIsCreatedAgainAndCheckpointsAreAcknowledged(Vertx vertx, @TempDir Path dir) {
    EmbeddedDatabase postgres = EmbeddedDatabase.start(new EmbeddedConfig(dir, TestAckpoint.freePort()));
    JsonObject config = TestAckpoint.withFollower(TestAckpoint.configJson(postgres.uri()));
    String slot = TestAckpoint.slotOf(config);
    String token = TestKeys.token(vertx, "u");
    ApiClient api = new ApiClient(vertx, TestAckpoint.portOf(config));
    try (Sql sql = new Sql(vertx, postgres.uri())) {
      Ackpoint first = Await.result(TestAckpoint.start(vertx, config));
      assertEquals(true, acknowledged(api, token, "1"));
      Await.result(first.close());

      // While nothing follows the slot, more WAL is written than the source keeps for it.
      sql.query("ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'");
      sql.query("SELECT pg_reload_conf()");
      sql.query("CREATE TABLE walgen (x text)");
      for (int i = 0; i < 20 && !"lost".equals(walStatus(sql, slot)); i++) {
        sql.query("INSERT INTO walgen SELECT repeat('x', 1000) FROM generate_series(1, 2000)");
        sql.query("SELECT pg_switch_wal()");
        sql.query("CHECKPOINT");
      }
      assertEquals("lost", walStatus(sql, slot), "the source invalidated the slot");

      Ackpoint second = Await.result(TestAckpoint.start(vertx, config));
      try {
        assertEquals(true, acknowledged(api, token, "2"));
        assertEquals("reserved", walStatus(sql, slot));
      } finally {
        Await.result(second.close());
      }
    } finally {
      postgres.close();
    }
  }
}
