package io.ackpoint.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The sockets this process holds open that the kernel no longer lists as connections (Linux's
 * /proc): closed on the network, their descriptor never closed.
 */
public final class DeadSockets {

  private DeadSockets() {
  }

  public static long count() {
    Set<String> listed = new HashSet<>();
    for (String table : List.of("tcp", "tcp6", "udp", "udp6", "unix")) {
      try {
        List<String> lines = Files.readAllLines(Path.of("/proc/net", table));
        // The inode: the tenth column of the IP tables, the seventh of unix's.
        int column = table.equals("unix") ? 6 : 9;
        lines.stream().skip(1).map(line -> line.trim().split("\\s+")).filter(f -> f.length > column)
            .forEach(f -> listed.add(f[column]));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    try (Stream<Path> descriptors = Files.list(Path.of("/proc/self/fd"))) {
      return descriptors.map(DeadSockets::target).filter(t -> t.startsWith("socket:["))
          .map(t -> t.substring("socket:[".length(), t.length() - 1)).filter(inode -> !listed.contains(inode)).count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String target(Path descriptor) {
    try {
      return Files.readSymbolicLink(descriptor).toString();
    } catch (IOException e) {
      return ""; // closed meanwhile
    }
  }
}
