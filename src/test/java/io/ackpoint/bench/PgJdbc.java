package io.ackpoint.bench;

import io.vertx.pgclient.PgConnectOptions;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/** A plain JDBC connection to the database of a {@code postgresql://} URI, for the bench's set-up and its reads of the server. */
final class PgJdbc {

  private PgJdbc() {
  }

  static Connection connect(String uri) throws SQLException {
    PgConnectOptions o = PgConnectOptions.fromUri(uri);
    return DriverManager.getConnection("jdbc:postgresql://" + o.getHost() + ":" + o.getPort() + "/" + o.getDatabase(),
        o.getUser(), o.getPassword() == null ? "" : o.getPassword());
  }
}
