package io.ackpoint.bench;

import io.ackpoint.support.TestMongo;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * The MongoDB-storage case of scripts/bench. Not a MongoDB benchmark: the only MongoDB-compatible
 * server on these machines is mongo-java-server, the in-memory test server, started here inside the
 * bench process; the source stays on PostgreSQL. What the case shows is that MongoDB storage batches
 * as PostgreSQL's does (requests per storage round trip).
 */
final class MongoStorageCase {

  static final String NAME = "mongodb storage on mongo-java-server (test server)";
  static final int[] CONNECTIONS = {64, 256};

  private MongoStorageCase() {
  }

  /** The environment of the benchmark's server, with storage on a fresh database of the test server. */
  static Map<String, String> env(Map<String, String> base) {
    Map<String, String> env = new HashMap<>(base);
    env.put("ACKPOINT_REPLICATION_SLOT_NAME", "bench_mongo_storage");
    env.put("ACKPOINT_STORAGE_TYPE", "mongodb");
    env.put("ACKPOINT_STORAGE_URI", TestMongo.freshDatabase());
    return env;
  }

  /** The report's section, from the case's row at each number of connections. */
  static String markdown(IntFunction<BenchRunner.Row> rowAt) {
    StringBuilder md = new StringBuilder("## MongoDB storage, on the test server\n\n");
    md.append("Storage on mongo-java-server (the in-memory MongoDB-compatible server the tests use, run inside the bench "
        + "process), source on the embedded PostgreSQL. It shows that MongoDB storage batches as PostgreSQL's does "
        + "(requests per storage round trip); its throughput is that of the test server, which has no secondary "
        + "indexes and scans for every query, and says nothing about a real MongoDB.\n\n");
    for (int c : CONNECTIONS) {
      BenchRunner.Row m = rowAt.apply(c);
      md.append(String.format(Locale.ROOT, "- %d connections: %,.0f successful requests/s, p99 %.1f ms, non-2xx: %s, "
              + "%.1f requests per storage round trip%n", c, m.wrk().okPerSecond(), m.wrk().p99us() / 1000.0, m.wrk().non2xx(),
          m.requestsPerRoundTrip()));
    }
    return md.toString();
  }
}
