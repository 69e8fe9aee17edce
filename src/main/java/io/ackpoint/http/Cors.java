package io.ackpoint.http;

import io.ackpoint.config.ConfigException;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.handler.CorsHandler;

import java.util.List;
import java.util.Set;

/**
 * Browsers are clients too (PowerSync's web SDK): preflights are answered and every response carries
 * the CORS headers. Credentials travel in the Authorization header, so no cookie is ever allowed.
 */
final class Cors {

  /**
   * What a PowerSync web client sends, plus what Ackpoint reads itself, plus {@code user-agent}: the
   * reference allows it, and a browser that lets a script set it (Firefox) asks for it in preflight.
   */
  private static final Set<String> REQUEST_HEADERS = Set.of(
      "authorization", "content-type", "accept", "user-agent", "x-user-agent", "x-request-id");
  /** What a script may read: when to retry, and which request this was. */
  private static final Set<String> EXPOSED_HEADERS = Set.of("retry-after", "x-request-id");

  private Cors() {
  }

  /**
   * Refuses an allowed origin the CORS handler would refuse only when the first HTTP verticle starts,
   * after the databases, with a message that names no setting.
   */
  static void requireValidOrigins(List<String> allowedOrigins) {
    for (String origin : allowedOrigins) {
      if (!origin.equals("*")) {
        try {
          CorsHandler.create().addOrigin(origin);
        } catch (RuntimeException invalid) {
          throw new ConfigException("http.cors.allowed_origins", "'" + origin + "' is not an origin such as"
              + " https://app.example.com or http://localhost:3000 (or * for any)");
        }
      }
    }
  }

  static CorsHandler handler(List<String> allowedOrigins) {
    CorsHandler cors = CorsHandler.create();
    if (!allowedOrigins.contains("*")) {
      cors.addOrigins(allowedOrigins);
    }
    return cors
        .allowedMethods(Set.of(HttpMethod.GET, HttpMethod.POST, HttpMethod.OPTIONS))
        .allowedHeaders(REQUEST_HEADERS)
        .exposedHeaders(EXPOSED_HEADERS)
        .allowCredentials(false)
        .maxAgeSeconds(600);
  }
}
