package io.ackpoint.auth;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.auth.JWTOptions;
import io.vertx.ext.auth.impl.jose.JWK;
import io.vertx.ext.auth.jwt.JWTAuth;
import io.vertx.ext.auth.jwt.JWTAuthOptions;

import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * An immutable set of verification keys and the signature verifier built from them. Claims are not
 * checked by the verifier (expiry is ignored, no audience): {@link JwtAuthenticator} checks them
 * itself so that each failure gets its own error code.
 */
final class KeySet {

  /**
   * The verifier tries a token against every key of its algorithm that its kid does not rule out:
   * all of them for a token without a kid, those without a kid for one with a kid. Each is a
   * signature check on the event loop: against a published set of thousands of EC keys, one made-up
   * token held a loop for seconds (a hostile test of the key server). A token that more keys than
   * this could verify is refused.
   */
  static final int MAX_KEYS_TRIED = 4;

  private final JWTAuth verifier;
  private final Set<String> keyIds;
  private final Map<String, Integer> keysByAlgorithm;
  private final Map<String, Integer> keysWithoutKidByAlgorithm;

  private KeySet(JWTAuth verifier, Set<String> keyIds, Map<String, Integer> keysByAlgorithm,
                 Map<String, Integer> keysWithoutKidByAlgorithm) {
    this.verifier = verifier;
    this.keyIds = keyIds;
    this.keysByAlgorithm = keysByAlgorithm;
    this.keysWithoutKidByAlgorithm = keysWithoutKidByAlgorithm;
  }

  static KeySet of(Vertx vertx, List<JsonObject> jwks) {
    JWTAuthOptions options = new JWTAuthOptions()
        .setJWTOptions(new JWTOptions().setIgnoreExpiration(true));
    Set<String> kids = new HashSet<>();
    Map<String, Integer> algs = new HashMap<>();
    Map<String, Integer> withoutKid = new HashMap<>();
    for (JsonObject key : jwks) {
      JsonObject jwk = key.copy();
      String alg = jwk.getString("alg");
      if (alg == null) {
        alg = defaultAlgorithm(jwk.getString("kty", ""));
        jwk.put("alg", alg);
      }
      algs.merge(alg, 1, Integer::sum);
      String kid = jwk.getString("kid");
      if (kid != null) {
        kids.add(kid);
      } else {
        withoutKid.merge(alg, 1, Integer::sum);
      }
      options.addJwk(jwk);
    }
    return new KeySet(JWTAuth.create(vertx, options), Set.copyOf(kids), Map.copyOf(algs), Map.copyOf(withoutKid));
  }

  /**
   * The keys of a JWKS document. A document whose keys are not a list is not a JWKS: it throws
   * {@link IllegalArgumentException} (for a remote document, a failed fetch, which keeps the keys
   * known). A key that is not an object whose kty, kid and alg are strings is left out, as RFC 7517
   * section 5 says, and so verifies nothing; so is a secret shorter than its algorithm's hash
   * ({@link #shortSecret}). The others are used.
   */
  static List<JsonObject> keysOf(JsonObject jwks) {
    Object keys = jwks.containsKey("keys") ? jwks.getValue("keys") : new JsonArray();
    if (!(keys instanceof JsonArray list)) {
      throw new IllegalArgumentException("not a JWKS: keys is not a list");
    }
    List<JsonObject> out = new ArrayList<>(list.size());
    for (Object key : list) {
      if (key instanceof JsonObject jwk && stringOrAbsent(jwk, "kty") && stringOrAbsent(jwk, "kid") && stringOrAbsent(jwk, "alg")
          && shortSecret(jwk) == null && !notForSignatures(jwk)) {
        out.add(jwk);
      }
    }
    return List.copyOf(out);
  }

  /**
   * Whether a key says it is for encryption: {@code use} {@code enc}, or an {@code alg} of JWE's
   * (RFC 7518 section 4: RSA-OAEP, ECDH-ES, A128KW...). Not an error in a JWKS: such keys are left
   * out. Any other {@code alg} must be a signature's ({@link #unusable} refuses a misspelt one).
   */
  static boolean notForSignatures(Object key) {
    if (!(key instanceof JsonObject jwk)) {
      return false;
    }
    return "enc".equals(jwk.getValue("use"))
        || jwk.getValue("alg") instanceof String alg && ENCRYPTION.matcher(alg).matches()
        // RFC 7517 section 4.3: a key whose operations are listed verifies only if "verify" is one.
        || jwk.getValue("key_ops") instanceof JsonArray ops && !ops.contains("verify");
  }

  private static final int MIN_RSA_BITS = 2048;

  private static final Pattern ENCRYPTION = Pattern.compile("RSA1_5|RSA-OAEP(-\\d+)?|A\\d+(GCM)?KW|dir|ECDH-ES(\\+A\\d+KW)?|PBES2-.*");

  /**
   * Why a configured key cannot verify anything, or null if it can. The verifier itself skips such a
   * key with a warning that names no setting, and every token is then refused as badly signed.
   */
  static String unusable(Object key) {
    if (!(key instanceof JsonObject jwk)) {
      return "is not a JSON object";
    }
    if (!(jwk.getValue("kty") instanceof String) || !stringOrAbsent(jwk, "kid") || !stringOrAbsent(jwk, "alg")) {
      return "needs kty as a string, and kid and alg, if given, as strings";
    }
    JsonObject withAlg = jwk.copy();
    withAlg.put("alg", jwk.getString("alg", defaultAlgorithm(jwk.getString("kty"))));
    try {
      JWK parsed = new JWK(withAlg);
      if (parsed.mac() == null && parsed.publicKey() == null) {
        return "holds no verification key (kty " + jwk.getString("kty") + " needs " + keyMembers(jwk.getString("kty")) + ")";
      }
      if (parsed.publicKey() instanceof RSAPublicKey rsa && rsa.getModulus().bitLength() < MIN_RSA_BITS) {
        return "is an RSA key of " + rsa.getModulus().bitLength() + " bits: RFC 7518 section 3.3 requires at least " + MIN_RSA_BITS;
      }
      return parsed.mac() != null ? shortSecret(withAlg) : null;
    } catch (RuntimeException e) {
      String reason = e.getCause() != null ? e.getCause().toString() : e.toString();
      return "cannot be used with alg " + withAlg.getString("alg") + ": " + reason;
    }
  }

  /**
   * Why an HMAC secret is too short to be one, or null: RFC 7518 section 3.2 requires a key at least
   * as long as the hash (32 bytes for HS256). A shorter one is guessed by trying, and whoever guesses
   * it signs tokens for any user.
   */
  static String shortSecret(JsonObject jwk) {
    if (!(jwk.getValue("k") instanceof String k)) {
      return null;
    }
    String alg = jwk.getValue("alg") instanceof String a ? a : defaultAlgorithm(String.valueOf(jwk.getValue("kty")));
    int required = switch (alg) {
      case "HS256" -> 32;
      case "HS384" -> 48;
      case "HS512" -> 64;
      default -> 0;
    };
    int bytes;
    try {
      bytes = Base64.getUrlDecoder().decode(k).length;
    } catch (IllegalArgumentException notBase64url) {
      return null;
    }
    return bytes < required
        ? "is a secret of " + bytes + " bytes: " + alg + " needs at least " + required + " (RFC 7518 section 3.2)"
        : null;
  }

  private static String keyMembers(String kty) {
    return switch (kty.toUpperCase(Locale.ROOT)) {
      case "RSA" -> "n and e";
      case "EC" -> "crv, x and y";
      default -> "k";
    };
  }

  private static boolean stringOrAbsent(JsonObject jwk, String name) {
    return !jwk.containsKey(name) || jwk.getValue(name) instanceof String;
  }

  private static String defaultAlgorithm(String kty) {
    return switch (kty.toUpperCase(Locale.ROOT)) {
      case "RSA" -> "RS256";
      case "EC" -> "ES256";
      default -> "HS256";
    };
  }

  /** What the verifier tells keys apart by: the algorithm (as {@link #of} defaults it) and the kid. */
  static String name(JsonObject jwk) {
    String alg = jwk.getValue("alg") instanceof String a ? a : defaultAlgorithm(String.valueOf(jwk.getValue("kty")));
    return alg + " " + jwk.getString("kid");
  }

  JWTAuth verifier() {
    return verifier;
  }

  boolean hasKey(String kid) {
    return keyIds.contains(kid);
  }

  boolean accepts(String algorithm) {
    return keysByAlgorithm.containsKey(algorithm);
  }

  /** How many keys a token of {@code algorithm} that names {@code kid} (null: none) would be tried against. */
  int keysTried(String algorithm, String kid) {
    return kid == null ? keysByAlgorithm.getOrDefault(algorithm, 0)
        : keysWithoutKidByAlgorithm.getOrDefault(algorithm, 0) + 1;
  }
}
