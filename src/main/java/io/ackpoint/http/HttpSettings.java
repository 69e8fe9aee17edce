package io.ackpoint.http;

import io.ackpoint.AckpointAddresses;
import io.ackpoint.auth.Authenticator;
import io.ackpoint.config.AckpointConfig;

import java.util.function.Supplier;

/**
 * What the HTTP API of one Ackpoint needs, whoever serves it: its own HTTP verticles or the host's
 * router. {@code queues} are shared by every event loop of the Ackpoint; {@code metricsText} gives
 * the Prometheus text of {@code GET /metrics}, or is null when metrics go to a registry that has none;
 * {@code livenessProblem} says why this Ackpoint can no longer do its job without a restart, or
 * answers null; {@code connections} counts the connections of Ackpoint's own HTTP port, shared by
 * its verticles.
 */
public record HttpSettings(AckpointConfig config, AckpointAddresses addresses, HttpQueues queues,
                           ConnectionLimit connections, Authenticator.Factory authenticators, HttpListener listener, Supplier<String> metricsText,
                           Supplier<String> livenessProblem) {
}
