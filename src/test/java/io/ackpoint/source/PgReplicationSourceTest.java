package io.ackpoint.source;

import io.ackpoint.support.Await;
import io.ackpoint.support.Sql;
import io.ackpoint.support.TestDatabase;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(VertxExtension.class)
class PgReplicationSourceTest {

  @Test
  void headIsAZeroPaddedLsnThatSortsInReplicationOrder(Vertx vertx) {
    try (Sql sql = new Sql(vertx, TestDatabase.freshDatabase())) {
      PgReplicationSource source = new PgReplicationSource(sql.pool());
      String before = Await.result(source.readHead());
      assertTrue(before.matches("[0-9A-F]{8}/[0-9A-F]{8}"), before);
      Await.result(source.forceMarker());
      String after = Await.result(source.readHead());
      assertTrue(after.compareTo(before) > 0, before + " then " + after);
    }
  }

  @Test
  void lsnTextIsPaddedSoThatTextOrderIsLsnOrder() {
    assertEquals("00000000/00000009", Lsn.format("0/9"));
    assertEquals("00000001/0000000A", Lsn.format("1/A"));
    assertTrue(Lsn.format("0/10").compareTo(Lsn.format("0/9")) > 0);
    assertEquals(0x1_0000000AL, Lsn.parse("00000001/0000000A"));
    assertEquals("12345678/9ABCDEF0", Lsn.format(0x12345678_9ABCDEF0L));
    assertEquals("FFFFFFFF/FFFFFFFF", Lsn.format(-1L));
    assertEquals("00000000/00000000", Lsn.format(0L));
  }
}
