package io.ackpoint.config;

import io.ackpoint.config.AckpointConfig.ClusterConfig;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The {@code cluster.*} keys: defaults, variables, and what cluster mode refuses. */
class ClusterConfigTest {

  private static JsonObject external() {
    return new JsonObject()
        .put("auth", new JsonObject().put("audience", "a")
            .put("jwks", new JsonObject("{\"keys\":[{\"kty\":\"oct\",\"kid\":\"k\",\"k\":\"c2VjcmV0\"}]}")))
        .put("source", new JsonObject().put("type", "postgresql").put("uri", "postgresql://app/db"))
        .put("storage", new JsonObject().put("type", "postgresql").put("uri", "postgresql://app/db"));
  }

  private static ClusterConfig cluster(JsonObject file, Map<String, String> env) {
    return ConfigLoader.resolve(file, env).cluster();
  }

  private static ConfigException refused(JsonObject file, Map<String, String> env) {
    return assertThrows(ConfigException.class, () -> ConfigLoader.resolve(file, env));
  }

  private static Map<String, String> enabled(String... more) {
    Map<String, String> env = new HashMap<>(Map.of("ACKPOINT_CLUSTER_ENABLED", "true"));
    for (int i = 0; i < more.length; i += 2) {
      env.put(more[i], more[i + 1]);
    }
    return env;
  }

  @Test
  void offByDefaultWithHazelcastsPortOnLoopbackAndATenSecondFailover() {
    ClusterConfig cluster = cluster(external(), Map.of());
    assertFalse(cluster.enabled());
    assertEquals("127.0.0.1", cluster.host());
    assertEquals(5701, cluster.port());
    assertEquals(0, cluster.eventBusPort());
    assertNull(cluster.publicHost());
    assertEquals(List.of(), cluster.members());
    assertNull(cluster.kubernetesServiceDns());
    assertEquals(Duration.ofSeconds(10), cluster.failoverTimeout());
  }

  @Test
  void everyKeyHasItsVariable() {
    ClusterConfig cluster = cluster(external(), enabled(
        "ACKPOINT_CLUSTER_HOST", "0.0.0.0",
        "ACKPOINT_CLUSTER_PUBLIC_HOST", "10.0.0.7",
        "ACKPOINT_CLUSTER_PORT", "5801",
        "ACKPOINT_CLUSTER_EVENTBUS_PORT", "5802",
        "ACKPOINT_CLUSTER_MEMBERS", "10.0.0.7:5801, ackpoint-2:5801",
        "ACKPOINT_CLUSTER_FAILOVER_TIMEOUT", "6s"));
    assertTrue(cluster.enabled());
    assertEquals("10.0.0.7", cluster.advertisedHost());
    assertEquals(5802, cluster.eventBusPort());
    assertEquals(List.of("10.0.0.7:5801", "ackpoint-2:5801"), cluster.members());
    assertEquals(Duration.ofSeconds(6), cluster.failoverTimeout());
    assertEquals("k8s.svc", cluster(external(), enabled("ACKPOINT_CLUSTER_KUBERNETES_SERVICE_DNS", "k8s.svc")).kubernetesServiceDns());
  }

  @Test
  void clusterModeRefusesTheEmbeddedDatabaseSayingWhy() {
    JsonObject embedded = external();
    embedded.remove("source");
    embedded.remove("storage");
    ConfigException e = refused(embedded, enabled());
    assertTrue(names(e, "cluster.enabled") && e.getMessage().contains("needs external databases"), e.getMessage());
  }

  @Test
  void badClusterKeysAreRefusedByName() {
    assertTrue(names(refused(external(), enabled("ACKPOINT_CLUSTER_HOST", "0.0.0.0")), "cluster.public_host"));
    assertTrue(names(refused(external(), enabled("ACKPOINT_CLUSTER_MEMBERS", "10.0.0.1")), "cluster.members"));
    assertTrue(names(refused(external(), enabled("ACKPOINT_CLUSTER_MEMBERS", "a:70000")), "cluster.members"));
    assertTrue(names(refused(external(), enabled("ACKPOINT_CLUSTER_FAILOVER_TIMEOUT", "500ms")), "cluster.failover_timeout"));
    assertTrue(names(refused(external(), enabled("ACKPOINT_CLUSTER_MEMBERS", "a:5701",
        "ACKPOINT_CLUSTER_KUBERNETES_SERVICE_DNS", "s")), "cluster.kubernetes_service_dns"));
  }

  private static boolean names(ConfigException e, String key) {
    return e.getMessage().startsWith("configuration key '" + key + "'");
  }
}
