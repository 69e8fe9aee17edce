package io.ackpoint.bench;

/** What an Ackpoint that nobody calls costs: its process's CPU over a window, once start-up work has settled. */
final class IdleCpu {

  record Result(double settleSeconds, double windowSeconds, double percentOfACore) {
  }

  private IdleCpu() {
  }

  static Result measure(ServerProcess server, int settleSeconds, int windowSeconds) throws InterruptedException {
    Thread.sleep(settleSeconds * 1000L); // the JIT compiler's tail of the warm-up is not idleness
    double before = Cpu.ofProcess(server.pid());
    long start = System.nanoTime();
    Thread.sleep(windowSeconds * 1000L); // measuring over a fixed window: there is nothing to await
    double seconds = (System.nanoTime() - start) / 1e9;
    return new Result(settleSeconds, seconds, (Cpu.ofProcess(server.pid()) - before) / seconds * 100);
  }
}
