package io.ackpoint.config;

import com.mongodb.ConnectionString;

/** What a {@code mongodb} URI must say: it parses as a MongoDB connection string and names its database. */
final class MongoUri {

  private MongoUri() {
  }

  /** Why {@code uri} cannot address Ackpoint's MongoDB database, or {@code null} when it can. */
  static String problem(String uri) {
    ConnectionString parsed;
    try {
      parsed = new ConnectionString(uri);
    } catch (IllegalArgumentException e) {
      return "is not a MongoDB connection string (mongodb://host:27017/database?replicaSet=rs0): " + e.getMessage();
    }
    if (parsed.getDatabase() == null || parsed.getDatabase().isBlank()) {
      // Without it the client would quietly use a database of its own choosing.
      return "must name the database, as in mongodb://host:27017/app?replicaSet=rs0";
    }
    return null;
  }
}
