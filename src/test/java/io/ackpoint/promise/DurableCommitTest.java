package io.ackpoint.promise;

import io.ackpoint.config.AckpointConfig.DatabaseConfig;
import io.ackpoint.config.AckpointConfig.DatabaseType;
import io.ackpoint.impl.PgPools;
import io.ackpoint.support.Await;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestDatabase;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * "A 200 means the checkpoint is committed": that holds only if a commit waits for its WAL flush.
 * Ackpoint's sessions commit that way on a server configured otherwise, and keep whatever stronger
 * setting the operator chose (waits for standbys).
 */
@ExtendWith(VertxExtension.class)
class DurableCommitTest {

  @ParameterizedTest(name = "configured {0}, Ackpoint commits with {1}")
  @CsvSource({"off, local", "local, local", "on, on", "remote_apply, remote_apply"})
  void ackpointsSessionsCommitDurablyWhateverTheServerIsConfiguredWith(String configured, String used, Vertx vertx) {
    String uri = TestDatabase.freshDatabase();
    try (Sql sql = new Sql(vertx, uri)) {
      sql.query("DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET synchronous_commit = " + configured
          + "', current_database()); END $$");
    }
    Pool pool = PgPools.create(vertx, new DatabaseConfig(DatabaseType.POSTGRESQL, uri, 1, Duration.ofSeconds(5),
        Duration.ofSeconds(10)), "durable-commit-test");
    try {
      String setting = Await.result(pool.query("SHOW synchronous_commit").execute()).iterator().next().getString(0);
      assertEquals(used, setting);
    } finally {
      Await.result(pool.close());
    }
  }
}
