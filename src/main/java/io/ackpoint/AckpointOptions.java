package io.ackpoint;

import io.ackpoint.config.AckpointConfig;
import io.ackpoint.config.ConfigException;
import io.ackpoint.config.ConfigLoader;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.json.JsonObject;

import java.util.Map;

/**
 * How to run an Ackpoint: the keys of {@code conf/ackpoint.yaml} as JSON (any key left out takes its
 * default, see {@code ackpoint-defaults.yaml}), and where its metrics go. The keys are validated by
 * {@link Ackpoint#deploy}, which fails with a {@code io.ackpoint.config.ConfigException} naming the
 * first invalid key; only a setter whose section is no object ({@code "http": "x"}) throws it at once.
 */
public class AckpointOptions {

  private final JsonObject json;
  private MeterRegistry meterRegistry;

  /** All defaults: the embedded database, HTTP on 127.0.0.1:8080 (keys still have to be given). */
  public AckpointOptions() {
    this(new JsonObject());
  }

  /** The keys of {@code conf/ackpoint.yaml}, nested as in the file. */
  public AckpointOptions(JsonObject json) {
    this.json = json.copy();
  }

  public AckpointOptions(AckpointOptions other) {
    this.json = other.json.copy();
    this.meterRegistry = other.meterRegistry;
  }

  public JsonObject toJson() {
    return json.copy();
  }

  public MeterRegistry getMeterRegistry() {
    return meterRegistry;
  }

  /** Metrics go to {@code registry} (the host's own, say); without one Ackpoint keeps a Prometheus registry of its own. */
  public AckpointOptions setMeterRegistry(MeterRegistry registry) {
    this.meterRegistry = registry;
    return this;
  }

  /** {@code http.enabled}: false for an Ackpoint used over the event bus, or mounted with {@link Ackpoint#createRouter()}. */
  public AckpointOptions setHttpEnabled(boolean enabled) {
    section("http").put("enabled", enabled);
    return this;
  }

  /** {@code eventbus.prefix}: two Ackpoints on one Vert.x need two prefixes. */
  public AckpointOptions setEventBusPrefix(String prefix) {
    section("eventbus").put("prefix", prefix);
    return this;
  }

  private JsonObject section(String name) {
    Object value = json.getValue(name);
    if (value == null) {
      JsonObject section = new JsonObject();
      json.put(name, section);
      return section;
    }
    if (value instanceof JsonObject section) {
      return section;
    }
    throw new ConfigException(name, "must be an object of keys, so that a setter can set one of them");
  }

  /** The validated configuration; throws a {@code ConfigException} naming the first invalid key. */
  public AckpointConfig toConfig() {
    return ConfigLoader.resolve(json, Map.of());
  }
}
