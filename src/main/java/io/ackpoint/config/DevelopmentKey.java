package io.ackpoint.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The HS256 key that {@code conf/ackpoint.yaml} ships for development ({@code scripts/token} signs
 * with it). It is published with the source, so anyone can sign any token with it: it may only be
 * trusted while Ackpoint listens on a loopback address. It is recognised by its key material, so
 * renaming its kid does not make it secret.
 */
public final class DevelopmentKey {

  private static final byte[] SECRET = Base64.getUrlDecoder().decode("iJoVKTbQkCatM5bOb3GMzH-irPqiv-EwBnI_6EVtkv0");
  private static final int HMAC_LARGEST_BLOCK = 128;
  private static final Pattern IPV4_LOOPBACK = Pattern.compile("127\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");

  private DevelopmentKey() {
  }

  /** The kid under which {@code jwks} holds the development key ({@code "(none)"} without one), if it does. */
  public static Optional<String> kidIn(JsonObject jwks) {
    if (!(jwks.getValue("keys") instanceof JsonArray keys)) {
      return Optional.empty();
    }
    for (Object key : keys) {
      if (key instanceof JsonObject jwk && is(jwk)) {
        return Optional.of(jwk.getValue("kid") instanceof String kid ? kid : "(none)");
      }
    }
    return Optional.empty();
  }

  /** Whether {@code jwk} holds the development key's secret, under any kid. */
  public static boolean is(JsonObject jwk) {
    return jwk.getValue("k") instanceof String k && isDevelopmentSecret(k);
  }

  private static boolean isDevelopmentSecret(String k) {
    byte[] key;
    try {
      // Compared decoded, as the verifier uses it: padding or no padding is the same key.
      key = Base64.getUrlDecoder().decode(k);
    } catch (IllegalArgumentException notBase64url) {
      return false;
    }
    // HMAC pads a key shorter than its hash's block with zero bytes: followed by zeros up to the
    // block (128 bytes for HS384 and HS512), the development key is the same key (a hostile test
    // started off loopback with it).
    int end = key.length;
    if (key.length <= HMAC_LARGEST_BLOCK) {
      while (end > SECRET.length && key[end - 1] == 0) {
        end--;
      }
    }
    return MessageDigest.isEqual(SECRET, Arrays.copyOf(key, end));
  }

  /**
   * True for the hosts that bind to loopback only: {@code localhost}, 127.x.x.x and {@code ::1}.
   * Decided from the text alone: a host name is never resolved here (that would block, and a name
   * that resolves to loopback today need not tomorrow).
   */
  public static boolean isLoopback(String host) {
    if (host.toLowerCase(Locale.ROOT).equals("localhost")) {
      return true;
    }
    Matcher ipv4 = IPV4_LOOPBACK.matcher(host);
    if (ipv4.matches()) {
      for (int i = 1; i <= 3; i++) {
        if (Integer.parseInt(ipv4.group(i)) > 255) {
          return false;
        }
      }
      return true;
    }
    if (host.indexOf(':') < 0) {
      return false;
    }
    try {
      // With a colon, InetAddress only parses an IPv6 literal; it never looks the text up.
      return InetAddress.getByName(host).isLoopbackAddress();
    } catch (UnknownHostException notAnIpv6Literal) {
      return false;
    }
  }
}
