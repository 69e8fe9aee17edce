package io.ackpoint.config;

import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.SslMode;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What a {@code postgresql} URI says, for every connection Ackpoint makes with it: the pools of the
 * Vert.x client and the replication connection of PgJDBC alike. Its TLS parameters mean what they
 * mean to libpq ({@code sslmode}, {@code sslrootcert}), which the Vert.x client reads only in part:
 * it takes {@code sslmode} from the URI but no certificate, so that {@code require} failed every
 * connection and {@code prefer} quietly fell back to plain text.
 */
public final class PgUri {

  private static final String EXAMPLE = "postgresql://user:password@host:5432/database?sslmode=require";

  /** libpq's client certificate parameters; Ackpoint authenticates with the URI's password only. */
  private static final Set<String> CLIENT_CERTIFICATE = Set.of("sslcert", "sslkey", "sslpassword");
  /** The TLS parameters read here; any other of libpq's or PgJDBC's ({@code ssl*}, {@code gss*}) is refused, not ignored. */
  private static final Set<String> TLS = Set.of("sslmode", "sslrootcert");

  private final PgConnectOptions options;
  /** The URI's sslmode; null when it gives none. */
  private final SslMode sslMode;
  private final String rootCert;
  private final boolean namesApplication;

  private PgUri(PgConnectOptions options, SslMode sslMode, String rootCert, boolean namesApplication) {
    this.options = options;
    this.sslMode = sslMode;
    this.rootCert = rootCert;
    this.namesApplication = namesApplication;
  }

  /**
   * Why {@code uri} cannot address a PostgreSQL database, or {@code null} when it can. The message
   * never repeats the URI, which holds a password.
   */
  static String problem(String uri) {
    try {
      parse(uri);
      return null;
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
  }

  /**
   * The URI read, or an {@link IllegalArgumentException} that says what is wrong with it without
   * repeating it. Without {@code sslmode} the pools' connections are not encrypted (the Vert.x
   * client's default) and the replication connection prefers TLS (PgJDBC's), as before Ackpoint
   * read the parameter.
   */
  public static PgUri parse(String uri) {
    String scheme = uri.contains("://") ? uri.substring(0, uri.indexOf("://")) : "";
    if (!scheme.equals("postgresql") && !scheme.equals("postgres")) {
      throw new IllegalArgumentException("must begin with postgresql:// (a JDBC URL's jdbc: prefix and its ?user= and"
          + " &password= parameters are not read), as in " + EXAMPLE);
    }
    Map<String, String> parameters = parameters(uri);
    for (String name : parameters.keySet()) {
      if (CLIENT_CERTIFICATE.contains(name)) {
        throw new IllegalArgumentException("parameter " + name + ": client certificates are not supported;"
            + " Ackpoint authenticates with the URI's user and password");
      }
      if (!TLS.contains(name) && (name.startsWith("ssl") || name.startsWith("gss") || name.equals("requiressl"))) {
        throw new IllegalArgumentException("parameter " + name + " is not supported: TLS is sslmode's and sslrootcert's"
            + " (sslmode=require, say)");
      }
    }
    SslMode sslMode = null;
    String mode = parameters.get("sslmode");
    if (mode != null) {
      try {
        sslMode = SslMode.of(mode);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("sslmode must be one of disable, allow, prefer, require, verify-ca, verify-full");
      }
    }
    String rootCert = parameters.get("sslrootcert");
    if ("system".equals(rootCert)) {
      throw new IllegalArgumentException("sslrootcert=system is not supported: name the file of the system's authorities"
          + " (on Debian /etc/ssl/certs/ca-certificates.crt)");
    }
    if (rootCert != null && !(Files.isRegularFile(Path.of(rootCert)) && Files.isReadable(Path.of(rootCert)))) {
      throw new IllegalArgumentException("sslrootcert " + rootCert + " is not a readable file (the certificates, PEM, of"
          + " the authorities that sign the server's)");
    }
    if (rootCert == null && (sslMode == SslMode.VERIFY_CA || sslMode == SslMode.VERIFY_FULL)) {
      throw new IllegalArgumentException("sslmode=" + sslMode.value + " needs sslrootcert=<file>: the certificates, PEM,"
          + " of the authorities that sign the server's");
    }
    PgConnectOptions options;
    try {
      options = PgConnectOptions.fromUri(uri);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("is not a PostgreSQL connection URI, as in " + EXAMPLE
          + " (characters other than letters, digits and -._~!* in the user or password are percent-encoded: @ as %40)");
    }
    return new PgUri(options, sslMode, rootCert, parameters.containsKey("application_name"));
  }

  /** The URI's query parameters, names in lower case as libpq and the Vert.x client read them. */
  private static Map<String, String> parameters(String uri) {
    Map<String, String> parameters = new HashMap<>();
    int query = uri.indexOf('?');
    if (query < 0) {
      return parameters;
    }
    for (String pair : uri.substring(query + 1).split("&")) {
      int equals = pair.indexOf('=');
      if (equals > 0) {
        String name = pair.substring(0, equals).toLowerCase(Locale.ROOT);
        try {
          parameters.put(name, URLDecoder.decode(pair.substring(equals + 1).trim(), StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("parameter " + name + " is not percent-encoded correctly");
        }
      }
    }
    return parameters;
  }

  /**
   * Options for the Vert.x client, TLS included as libpq would make it: {@code allow} and
   * {@code prefer} encrypt without checking the server's certificate (a check that failed would
   * only fall back to plain text), as does {@code require} unless {@code sslrootcert} names the
   * authorities to check it against (libpq's rule when it has a root certificate);
   * {@code verify-ca} checks it, {@code verify-full} its host name too.
   */
  public PgConnectOptions connectOptions() {
    SslMode mode = sslMode == null ? SslMode.DISABLE : sslMode;
    PgConnectOptions connect = new PgConnectOptions(options).setSslMode(mode);
    if (mode == SslMode.DISABLE) {
      return connect;
    }
    ClientSSLOptions ssl = new ClientSSLOptions();
    if (rootCert == null || mode == SslMode.ALLOW || mode == SslMode.PREFER) {
      ssl.setTrustAll(true);
    } else {
      ssl.setTrustOptions(new PemTrustOptions().addCertPath(rootCert));
    }
    ssl.setHostnameVerificationAlgorithm(mode == SslMode.VERIFY_FULL ? "HTTPS" : "");
    return connect.setSslOptions(ssl);
  }

  /**
   * The {@code sslmode} to give PgJDBC for libpq's meaning: PgJDBC checks no certificate in
   * {@code require}, even against the {@code sslrootcert} it is given, where libpq checks the
   * authority; so {@code require} with a root certificate is {@code verify-ca} there. Without an
   * sslmode, PgJDBC's own default ({@code prefer}).
   */
  public String jdbcSslMode() {
    if (sslMode == null) {
      return SslMode.PREFER.value;
    }
    return sslMode == SslMode.REQUIRE && rootCert != null ? SslMode.VERIFY_CA.value : sslMode.value;
  }

  /** Whether the URI names the application its sessions show as ({@code application_name}). */
  public boolean namesApplication() {
    return namesApplication;
  }

  /** The file of the authorities that sign the server's certificate, or {@code null}. */
  public String rootCert() {
    return rootCert;
  }
}
