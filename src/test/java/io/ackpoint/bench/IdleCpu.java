package io.ackpoint.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * What an Ackpoint that nobody calls costs: its process's CPU over a window, once start-up work has
 * settled, and how often its threads woke up in that window. The wake-ups are the steadier figure:
 * an idle process's CPU is the sum of its wake-ups, and what one costs varies with the machine (on
 * the VM these figures were taken on, 0.3 to 2 ms each, from one minute to the next).
 */
final class IdleCpu {

  record Result(double settleSeconds, double windowSeconds, double percentOfACore, double wakeUpsPerSecond) {
  }

  private IdleCpu() {
  }

  static Result measure(ServerProcess server, int settleSeconds, int windowSeconds) throws InterruptedException {
    Thread.sleep(settleSeconds * 1000L); // the JIT compiler's tail of the warm-up is not idleness
    double before = Cpu.ofProcess(server.pid());
    long wokenBefore = wakeUps(server.pid());
    long start = System.nanoTime();
    Thread.sleep(windowSeconds * 1000L); // measuring over a fixed window: there is nothing to await
    double seconds = (System.nanoTime() - start) / 1e9;
    return new Result(settleSeconds, seconds, (Cpu.ofProcess(server.pid()) - before) / seconds * 100,
        (wakeUps(server.pid()) - wokenBefore) / seconds);
  }

  /** The voluntary context switches of the process's threads (each a sleep that ended): Linux's /proc. */
  static long wakeUps(long pid) {
    long total = 0;
    try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path task : (Iterable<Path>) tasks::iterator) {
        try {
          for (String line : Files.readAllLines(task.resolve("status"))) {
            if (line.startsWith("voluntary_ctxt_switches:")) {
              total += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
          }
        } catch (IOException ended) {
          // a thread that ended meanwhile: its switches leave the count (idle, only a pool's spare threads end)
        }
      }
    } catch (IOException e) {
      return 0;
    }
    return total;
  }
}
