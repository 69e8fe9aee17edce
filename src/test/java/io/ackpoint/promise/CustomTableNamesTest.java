package io.ackpoint.promise;

import io.ackpoint.support.LogCapture;
import io.ackpoint.support.Readiness;
import io.ackpoint.support.RunningAckpoint;
import io.ackpoint.support.Sql;
import io.ackpoint.support.StreamClient;
import io.ackpoint.support.TestAckpoint;
import io.ackpoint.support.TestDatabase;
import io.ackpoint.support.TestKeys;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Custom-mode names are exact, case-sensitive PostgreSQL names: what is configured is what is
 * followed, and a name that does not exist is reported instead of silently following nothing. So is
 * a table whose updates PostgreSQL cannot publish, and a database whose rows the stream may be unable
 * to carry (SQL_ASCII); a partitioned table is followed by its own name.
 */
@ExtendWith(VertxExtension.class)
class CustomTableNamesTest {

  private Vertx vertx;
  private String db;
  private RunningAckpoint app;

  @BeforeEach
  void database(Vertx vertx) {
    this.vertx = vertx;
    db = TestDatabase.freshDatabase();
  }

  @AfterEach
  void stop() {
    if (app != null) {
      app.close();
    }
  }

  private void sql(String statement) {
    try (Sql setup = new Sql(vertx, db)) {
      setup.query(statement);
    }
  }

  private void startCustom(JsonObject custom) {
    app = RunningAckpoint.on(vertx, db, c -> TestAckpoint.withFollower(c)
        .put("checkpoints", new JsonObject().put("mode", "custom"))
        .put("custom", custom));
  }

  private void startCustomCheckingEverySecond(JsonObject custom) {
    app = RunningAckpoint.on(vertx, db, c -> {
      TestAckpoint.withFollower(c).put("checkpoints", new JsonObject().put("mode", "custom")).put("custom", custom);
      c.getJsonObject("replication").put("status_interval", "1s");
      return c;
    });
  }

  private static JsonObject mixedCaseNames() {
    return new JsonObject().put("table", "Checkpoints").put("user_column", "UserId")
        .put("checkpoint_column", "Checkpoint").put("client_column", "ClientId");
  }

  @Test
  void aMixedCaseTableWithMixedCaseColumnsIsFollowedByItsExactNames() {
    sql("CREATE TABLE \"Checkpoints\" (id BIGSERIAL PRIMARY KEY, \"UserId\" TEXT NOT NULL, \"Checkpoint\" BIGINT NOT NULL,"
        + " \"ClientId\" TEXT)");
    // A table with the folded name as well: it is not the configured one, so it is not followed.
    sql("CREATE TABLE checkpoints (id BIGSERIAL PRIMARY KEY, userid TEXT, checkpoint BIGINT, clientid TEXT)");
    startCustom(mixedCaseNames());
    assertTrue(Readiness.probe(app).getBoolean("ready"));

    assertEquals("41", firstAcknowledgedAfter(
        "INSERT INTO checkpoints (userid, checkpoint, clientid) VALUES ('app-user', 99, 'c1')",
        "INSERT INTO \"Checkpoints\" (\"UserId\", \"Checkpoint\", \"ClientId\") VALUES ('app-user', 41, 'c1')"));
  }

  /** Why readiness is false: the follower refused to follow the configured table, so replication is not ready. */
  private String followerRefusedReason() {
    JsonObject readiness = Readiness.probe(app);
    assertEquals(false, readiness.getBoolean("ready"), readiness.encode());
    assertEquals(false, readiness.getBoolean("replication"), readiness.encode());
    return readiness.getString("reason");
  }

  /** The id of the first acknowledgement a stream of user app-user, client c1, hears once {@code statements} ran. */
  private String firstAcknowledgedAfter(String... statements) {
    try (StreamClient stream = app.stream(TestKeys.token(vertx, "app-user"), "c1")) {
      stream.next();
      stream.next();
      for (String statement : statements) {
        app.sql.query(statement);
      }
      return stream.nextMatching(l -> l.containsKey("checkpoint_diff")).getJsonObject("checkpoint_diff").getString("write_checkpoint");
    }
  }

  @Test
  void aConfiguredTableThatExistsOnlyWithOtherCaseMakesReadinessFalseWithTheReason() {
    sql("CREATE TABLE checkpoints (id BIGSERIAL PRIMARY KEY, user_id TEXT NOT NULL, checkpoint BIGINT NOT NULL, client_id TEXT)");
    startCustom(new JsonObject().put("table", "Checkpoints"));

    String reason = followerRefusedReason();
    assertTrue(reason.contains("custom.table \"Checkpoints\" does not exist in schema public"), reason);
    assertTrue(reason.contains("case-sensitive"), reason);
    assertTrue(reason.contains("did you mean checkpoints?"), reason);
  }

  /** SQL_ASCII text is never checked: one row that is not UTF-8 would stop the replication stream for good. */
  @Test
  void aSourceDatabaseEncodedSqlAsciiMakesReadinessFalseWithTheReason() {
    db = TestDatabase.freshDatabase("ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
    sql("CREATE TABLE checkpoints (id BIGSERIAL PRIMARY KEY, user_id TEXT NOT NULL, checkpoint BIGINT NOT NULL, client_id TEXT)");
    startCustom(new JsonObject().put("table", "checkpoints"));

    String reason = followerRefusedReason();
    assertTrue(reason.contains("custom mode needs a source database encoded in UTF8"), reason);
    assertTrue(reason.contains("this one is SQL_ASCII"), reason);
  }

  @Test
  void aConfiguredColumnThatDoesNotExistMakesReadinessFalseWithTheReason() {
    sql("CREATE TABLE \"Checkpoints\" (id BIGSERIAL PRIMARY KEY, \"UserId\" TEXT NOT NULL, \"Checkpoint\" BIGINT NOT NULL,"
        + " clientid TEXT)");
    startCustom(mixedCaseNames());

    String reason = followerRefusedReason();
    assertTrue(reason.contains("custom.client_column \"ClientId\" does not exist in table \"public\".\"Checkpoints\""), reason);
    assertTrue(reason.contains("did you mean clientid?"), reason);
  }

  @Test
  void aGeneratedColumnMakesReadinessFalseWithTheReason() {
    // PostgreSQL does not publish generated columns: every row would arrive without its id.
    sql("CREATE TABLE checkpoints (id BIGSERIAL PRIMARY KEY, user_id TEXT NOT NULL, client_id TEXT, seq BIGINT NOT NULL,"
        + " checkpoint BIGINT GENERATED ALWAYS AS (seq + 1) STORED)");
    startCustom(new JsonObject().put("table", "checkpoints"));

    String reason = followerRefusedReason();
    assertTrue(reason.contains("custom.checkpoint_column \"checkpoint\" is a generated column"), reason);
  }

  @Test
  void aColumnRenamedWhileFollowedMakesReadinessFalseWithTheReason() {
    sql("CREATE TABLE checkpoints (user_id TEXT NOT NULL, client_id TEXT NOT NULL, checkpoint BIGINT NOT NULL,"
        + " PRIMARY KEY (user_id, client_id))");
    startCustomCheckingEverySecond(new JsonObject().put("table", "checkpoints").put("client_column", "client_id"));
    assertTrue(Readiness.probe(app).getBoolean("ready"));

    sql("ALTER TABLE checkpoints RENAME COLUMN checkpoint TO cp");
    JsonObject readiness = Readiness.await(vertx, app, r -> !r.getBoolean("ready"));
    String reason = readiness.getString("reason");
    assertTrue(reason.contains("custom.checkpoint_column \"checkpoint\" does not exist"), reason);

    sql("ALTER TABLE checkpoints RENAME COLUMN cp TO checkpoint");
    Readiness.await(vertx, app, r -> r.getBoolean("ready"));
    assertEquals("7", firstAcknowledgedAfter("INSERT INTO checkpoints (user_id, client_id, checkpoint) VALUES ('app-user', 'c1', 7)"));
  }

  @Test
  void aRowWrittenWhileTheClientColumnIsRenamedIsNeverCreditedToTheUserWithoutAClient() {
    sql("CREATE TABLE checkpoints (id BIGSERIAL PRIMARY KEY, user_id TEXT NOT NULL, client_id TEXT, checkpoint BIGINT NOT NULL)");
    startCustom(new JsonObject().put("table", "checkpoints"));
    assertTrue(Readiness.probe(app).getBoolean("ready"));
    try (StreamClient noClient = app.stream(TestKeys.token(vertx, "app-user"), null)) {
      noClient.next();
      noClient.next();
      // Between the rename and the follower's next check, rows arrive without the configured column.
      app.sql.query("ALTER TABLE checkpoints RENAME COLUMN client_id TO device_id");
      app.sql.query("INSERT INTO checkpoints (user_id, device_id, checkpoint) VALUES ('app-user', 'k9', 4)");
      app.sql.query("ALTER TABLE checkpoints RENAME COLUMN device_id TO client_id");
      Readiness.await(vertx, app, r -> r.getBoolean("ready"));
      // Lower than 4: had 4 been credited to this user, 3 would change nothing.
      app.sql.query("INSERT INTO checkpoints (user_id, checkpoint) VALUES ('app-user', 3)");
      assertEquals("3", noClient.nextMatching(l -> l.containsKey("checkpoint_diff")).getJsonObject("checkpoint_diff")
          .getString("write_checkpoint"));
    }
  }

  @Test
  void aPartitionedTableIsFollowedThroughItsPartitions() {
    sql("CREATE TABLE checkpoints (user_id TEXT NOT NULL, client_id TEXT NOT NULL, checkpoint BIGINT NOT NULL,"
        + " PRIMARY KEY (user_id, client_id)) PARTITION BY HASH (user_id)");
    sql("CREATE TABLE checkpoints_0 PARTITION OF checkpoints FOR VALUES WITH (MODULUS 2, REMAINDER 0)");
    sql("CREATE TABLE checkpoints_1 PARTITION OF checkpoints FOR VALUES WITH (MODULUS 2, REMAINDER 1)");
    sql("INSERT INTO checkpoints (user_id, client_id, checkpoint) VALUES ('app-user', 'c1', 5)");
    startCustom(new JsonObject().put("table", "checkpoints").put("client_column", "client_id"));
    assertTrue(Readiness.probe(app).getBoolean("ready"));

    // An update: the row's partition publishes it under the partitioned table's name.
    assertEquals("6", firstAcknowledgedAfter("UPDATE checkpoints SET checkpoint = 6 WHERE user_id = 'app-user'"));
  }

  /** No key at all; a key PostgreSQL cannot use as the replica identity (deferrable); a partitioned table's partition without one. */
  @ParameterizedTest
  @ValueSource(strings = {
      "CREATE TABLE checkpoints (user_id TEXT NOT NULL, client_id TEXT NOT NULL, checkpoint BIGINT NOT NULL)",
      "CREATE TABLE checkpoints (user_id TEXT NOT NULL, client_id TEXT NOT NULL, checkpoint BIGINT NOT NULL,"
          + " PRIMARY KEY (user_id, client_id) DEFERRABLE)",
      "CREATE TABLE checkpoints (user_id TEXT NOT NULL, client_id TEXT NOT NULL, checkpoint BIGINT NOT NULL)"
          + " PARTITION BY LIST (client_id); CREATE TABLE checkpoints_c1 PARTITION OF checkpoints FOR VALUES IN ('c1');"
          + " ALTER TABLE checkpoints REPLICA IDENTITY FULL"})
  void aTableWithoutReplicaIdentityHasOnlyItsInsertsFollowedAndTheApplicationsUpdatesKeepWorking(String create)
      throws InterruptedException {
    for (String statement : create.split("; ")) {
      sql(statement);
    }
    sql("INSERT INTO checkpoints VALUES ('app-user', 'c1', 1)");
    // As an earlier version published it: with its updates, which fail in the application.
    sql("CREATE PUBLICATION ackpoint FOR TABLE checkpoints WITH (publish = 'insert, update')");
    try (LogCapture publication = LogCapture.of("io.ackpoint.source.Publication", "INFO")) {
      startCustom(new JsonObject().put("table", "checkpoints").put("client_column", "client_id"));
      assertTrue(Readiness.probe(app).getBoolean("ready"));
      assertTrue(publication.awaitMessage("WARN", Duration.ofSeconds(30)).contains("only its inserts are followed"));
    }
    app.sql.query("UPDATE checkpoints SET checkpoint = 2 WHERE user_id = 'app-user'");
    // Deleted (nor published) first, so that a key, deferrable or not, takes the insert.
    assertEquals("3", firstAcknowledgedAfter("DELETE FROM checkpoints WHERE user_id = 'app-user'",
        "INSERT INTO checkpoints VALUES ('app-user', 'c1', 3)"));
  }

  @Test
  void aTableReplacedWhileFollowedIsPublishedAgainAndItsRowsAreFollowed() throws InterruptedException {
    String create = "CREATE TABLE checkpoints (user_id TEXT NOT NULL, client_id TEXT NOT NULL, checkpoint BIGINT NOT NULL,"
        + " PRIMARY KEY (user_id, client_id))";
    sql(create);
    startCustomCheckingEverySecond(new JsonObject().put("table", "checkpoints").put("client_column", "client_id"));
    assertTrue(Readiness.probe(app).getBoolean("ready"));
    try (LogCapture follower = LogCapture.of("io.ackpoint.source.ReplicationFollowerVerticle");
         LogCapture publication = LogCapture.of("io.ackpoint.source.Publication", "INFO")) {
      // A dropped table leaves the publication; the one created in its place is not in it.
      sql("DROP TABLE checkpoints");
      sql(create);
      assertTrue(follower.awaitMessage("WARN", Duration.ofSeconds(30)).contains("is no longer published"));
      // Following again publishes the new table; rows committed before that are not published (README).
      assertTrue(publication.awaitMessage("INFO", Duration.ofSeconds(30)).contains("publishes custom.table"));
    }
    assertEquals("7", firstAcknowledgedAfter("INSERT INTO checkpoints (user_id, client_id, checkpoint) VALUES ('app-user', 'c1', 7)"));
  }

  @Test
  void aTableWhoseKeyIsDroppedWhileFollowedHasItsUpdatesUnpublishedAgain() throws InterruptedException {
    sql("CREATE TABLE checkpoints (user_id TEXT NOT NULL, client_id TEXT NOT NULL, checkpoint BIGINT NOT NULL,"
        + " CONSTRAINT checkpoints_key PRIMARY KEY (user_id, client_id))");
    sql("INSERT INTO checkpoints VALUES ('app-user', 'c1', 1)");
    startCustomCheckingEverySecond(new JsonObject().put("table", "checkpoints").put("client_column", "client_id"));
    assertTrue(Readiness.probe(app).getBoolean("ready"));
    try (LogCapture publication = LogCapture.of("io.ackpoint.source.Publication")) {
      sql("ALTER TABLE checkpoints DROP CONSTRAINT checkpoints_key");
      assertTrue(publication.awaitMessage("WARN", Duration.ofSeconds(30)).contains("only its inserts are followed"));
    }
    app.sql.query("UPDATE checkpoints SET checkpoint = 2 WHERE user_id = 'app-user'");
  }
}
