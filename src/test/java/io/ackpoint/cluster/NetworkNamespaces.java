package io.ackpoint.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Two network namespaces of the test's own making, for nodes that can be cut off from each other
 * while the test (and PostgreSQL, through a proxy) still reaches both:
 *
 * <pre>
 *   namespace A: cluster 10.77.0.1 ── veth pair ── cluster 10.77.0.2 :namespace B
 *                host-side 10.78.1.2                host-side 10.78.2.2
 *                   │ veth pair                        │ veth pair
 *   root namespace: 10.78.1.1                          10.78.2.1   (the test, PostgreSQL's proxy)
 * </pre>
 *
 * Cutting the cluster pair leaves both nodes on their host-side links. Needs root and iproute2.
 */
final class NetworkNamespaces implements AutoCloseable {

  static final String CLUSTER_A = "10.77.0.1";
  static final String CLUSTER_B = "10.77.0.2";
  static final String HOST_A = "10.78.1.2";
  static final String HOST_B = "10.78.2.2";
  static final String ROOT_A = "10.78.1.1";
  static final String ROOT_B = "10.78.2.1";

  private final String a;
  private final String b;
  private final String suffix;

  private NetworkNamespaces(String suffix) {
    this.suffix = suffix;
    this.a = "ackpt-a" + suffix;
    this.b = "ackpt-b" + suffix;
  }

  /** Whether this machine lets the test make namespaces: root, with {@code ip}. */
  static boolean available() {
    return "root".equals(System.getProperty("user.name"))
        && Stream.of("/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip").anyMatch(p -> Files.isExecutable(Path.of(p)));
  }

  static NetworkNamespaces create() throws IOException, InterruptedException {
    NetworkNamespaces ns = new NetworkNamespaces(Long.toString(ProcessHandle.current().pid() % 100_000));
    try {
      ns.build();
    } catch (IOException | InterruptedException | RuntimeException e) {
      ns.close();
      throw e;
    }
    return ns;
  }

  private void build() throws IOException, InterruptedException {
    ip("netns", "add", a);
    ip("netns", "add", b);
    in(a, "link", "set", "lo", "up");
    in(b, "link", "set", "lo", "up");
    // The cluster link, straight between the two namespaces.
    ip("link", "add", "acA" + suffix, "type", "veth", "peer", "name", "acB" + suffix);
    ip("link", "set", "acA" + suffix, "netns", a);
    ip("link", "set", "acB" + suffix, "netns", b);
    in(a, "addr", "add", CLUSTER_A + "/24", "dev", "acA" + suffix);
    in(b, "addr", "add", CLUSTER_B + "/24", "dev", "acB" + suffix);
    in(a, "link", "set", "acA" + suffix, "up");
    in(b, "link", "set", "acB" + suffix, "up");
    hostLink(a, "ahA" + suffix, "arA" + suffix, ROOT_A, HOST_A);
    hostLink(b, "ahB" + suffix, "arB" + suffix, ROOT_B, HOST_B);
  }

  private void hostLink(String namespace, String inside, String root, String rootAddress, String insideAddress)
      throws IOException, InterruptedException {
    ip("link", "add", root, "type", "veth", "peer", "name", inside);
    ip("link", "set", inside, "netns", namespace);
    ip("addr", "add", rootAddress + "/24", "dev", root);
    ip("link", "set", root, "up");
    in(namespace, "addr", "add", insideAddress + "/24", "dev", inside);
    in(namespace, "link", "set", inside, "up");
  }

  /** The command prefix that runs a process in namespace A or B. */
  List<String> exec(boolean inA) {
    return List.of("ip", "netns", "exec", inA ? a : b);
  }

  /** Cuts (or restores) the link between the two namespaces; each keeps its link to the root namespace. */
  void clusterLink(boolean up) throws IOException, InterruptedException {
    in(a, "link", "set", "acA" + suffix, up ? "up" : "down");
    in(b, "link", "set", "acB" + suffix, up ? "up" : "down");
  }

  private void in(String namespace, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("netns", "exec", namespace, "ip"));
    command.addAll(List.of(args));
    ip(command.toArray(String[]::new));
  }

  private static void ip(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("ip"));
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
      throw new IOException(String.join(" ", command) + " failed: " + output);
    }
  }

  /** Deleting a namespace deletes the veth ends in it, and with them their peers. */
  @Override
  public void close() throws IOException, InterruptedException {
    for (String namespace : List.of(a, b)) {
      try {
        ip("netns", "delete", namespace);
      } catch (IOException alreadyGone) {
        // nothing to clean up
      }
    }
  }
}
