package io.ackpoint.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** CPU seconds used by a process, or by every PostgreSQL process (with the time of children that ended), from /proc. */
final class Cpu {

  private static final double TICKS = 100.0; // USER_HZ on Linux

  private Cpu() {
  }

  static double ofProcess(long pid) {
    long[] t = stat(Path.of("/proc", Long.toString(pid), "stat"));
    return t == null ? 0 : (t[0] + t[1]) / TICKS;
  }

  /** Every process named postgres; the postmaster's children that ended count through cutime/cstime. */
  static double ofPostgres() {
    double total = 0;
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      for (Path p : (Iterable<Path>) procs::iterator) {
        if (!p.getFileName().toString().matches("\\d+")) {
          continue;
        }
        try {
          String comm = Files.readString(p.resolve("comm")).trim();
          if (comm.equals("postgres")) {
            long[] t = stat(p.resolve("stat"));
            if (t != null) {
              total += (t[0] + t[1] + t[2] + t[3]) / TICKS;
            }
          }
        } catch (IOException gone) {
          // the process ended meanwhile
        }
      }
    } catch (IOException e) {
      return 0;
    }
    return total;
  }

  /**
   * A PostgreSQL server's CPU seconds: its postmaster and every backend it runs (walsenders included),
   * with the time of backends that ended (the postmaster's cutime/cstime). Other servers on the
   * machine (a test run's) do not count.
   */
  static double ofServer(long postmasterPid) {
    long[] own = stat(Path.of("/proc", Long.toString(postmasterPid), "stat"));
    double total = own == null ? 0 : (own[0] + own[1] + own[2] + own[3]) / TICKS;
    for (ProcessHandle child : ProcessHandle.of(postmasterPid).map(p -> p.children().toList()).orElse(java.util.List.of())) {
      total += ofProcess(child.pid());
    }
    return total;
  }

  /**
   * A PostgreSQL server's CPU seconds by kind of process, read from each child's title: "backend"
   * (client connections), "walsender", "walwriter", "checkpointer", and so on; the walsenders of
   * {@code othersWalsenders} (another service's slots) as {@link #OTHERS_WALSENDER}.
   */
  static java.util.Map<String, Double> ofServerByKind(long postmasterPid, java.util.Collection<Long> othersWalsenders) {
    java.util.Map<String, Double> kinds = new java.util.TreeMap<>();
    for (ProcessHandle child : ProcessHandle.of(postmasterPid).map(p -> p.children().toList()).orElse(java.util.List.of())) {
      String kind = othersWalsenders.contains(child.pid()) ? OTHERS_WALSENDER : kind(child.pid());
      kinds.merge(kind, ofProcess(child.pid()), Double::sum);
    }
    return kinds;
  }

  static final String OTHERS_WALSENDER = "other service's walsender";

  private static String kind(long pid) {
    try {
      String title = Files.readString(Path.of("/proc", Long.toString(pid), "cmdline")).replace('\0', ' ').trim();
      String rest = title.startsWith("postgres: ") ? title.substring("postgres: ".length()) : title;
      String first = rest.split(" ")[0];
      return switch (first) {
        case "walsender", "walwriter", "checkpointer", "autovacuum", "logical", "background" -> first;
        default -> rest.contains("(") ? "backend" : first;
      };
    } catch (IOException | RuntimeException e) {
      return "gone";
    }
  }

  /** utime, stime, cutime, cstime. */
  private static long[] stat(Path file) {
    try {
      String s = Files.readString(file);
      String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
      return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12]), Long.parseLong(f[13]), Long.parseLong(f[14])};
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}
