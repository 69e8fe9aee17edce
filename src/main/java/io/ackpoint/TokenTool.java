package io.ackpoint;

import io.ackpoint.config.AckpointConfig;
import io.ackpoint.config.ConfigException;
import io.ackpoint.config.ConfigLoader;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.auth.JWTOptions;
import io.vertx.ext.auth.jwt.JWTAuth;
import io.vertx.ext.auth.jwt.JWTAuthOptions;

import java.time.Instant;

/** {@code scripts/token SUB [TTL]}: a development token signed with the configured HS256 key. */
public final class TokenTool {

  private TokenTool() {
  }

  public static void main(String[] args) {
    Logging.silenceUntilConfigured();
    // TTL: a whole number of seconds, at least 1 (a token that expired already is no use to anyone).
    if (args.length < 1 || args.length > 2 || args[0].isEmpty() || (args.length == 2 && !args[1].matches("[1-9][0-9]{0,9}"))) {
      System.err.println("usage: scripts/token SUB [TTL_SECONDS], TTL_SECONDS a whole number of seconds from 1");
      System.exit(2);
    }
    long ttl = args.length > 1 ? Long.parseLong(args[1]) : 3600;
    AckpointConfig config;
    try {
      config = ConfigLoader.load(System.getenv());
    } catch (ConfigException e) {
      System.err.println("invalid configuration: " + e.getMessage());
      System.exit(2);
      return;
    }
    // The token is the only thing on standard output.
    Logging.configure(new AckpointConfig.LogConfig("error", AckpointConfig.LogFormat.TEXT, false));
    JsonObject key = config.auth().jwks().getJsonArray("keys", new JsonArray()).stream()
        .filter(k -> k instanceof JsonObject jwk && "oct".equals(jwk.getValue("kty")))
        .map(k -> (JsonObject) k)
        .findFirst()
        .orElse(null);
    if (key == null) {
      System.err.println("the configuration has no HS256 (oct) key in auth.jwks to sign with");
      System.exit(2);
      return;
    }
    Vertx vertx = Vertx.vertx();
    try {
      JWTAuth auth = JWTAuth.create(vertx, new JWTAuthOptions().addJwk(key.copy().put("alg", key.getString("alg", "HS256"))));
      long now = Instant.now().getEpochSecond();
      JsonObject claims = new JsonObject()
          .put("sub", args[0])
          .put("aud", config.auth().audiences().get(0))
          .put("iat", now)
          .put("exp", now + ttl);
      JsonObject header = new JsonObject();
      if (key.getString("kid") != null) {
        header.put("kid", key.getString("kid"));
      }
      System.out.println(auth.generateToken(claims, new JWTOptions()
          .setAlgorithm(key.getString("alg", "HS256")).setHeader(header).setNoTimestamp(true)));
    } finally {
      vertx.close();
    }
  }
}
