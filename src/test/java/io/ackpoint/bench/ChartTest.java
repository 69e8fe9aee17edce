package io.ackpoint.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.Color;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Chart renders from made-up series without running the benchmark; main writes the same PNGs to a folder to look at. */
class ChartTest {

  private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

  @Test
  void rendersTheFullRunAsAPng(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("chart.png");
    Chart.write(file, fullRun(), fullRunAck(), "Ackpoint, 1000 users, loopback, 2 cores");
    assertPng(file);
  }

  @Test
  void rendersSmallFiguresAndAMissingPointAsAPng(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("chart.png");
    Chart.write(file, quickRun(), quickRunAck(), "Ackpoint, quick run");
    assertPng(file);
  }

  @Test
  void rendersTheComparisonWithTheReferenceAsAPng(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("compare.png");
    Chart.writeComparison(file, comparison(), "The reference beside Ackpoint");
    assertTrue(Files.isRegularFile(file), file + " written");
    BufferedImage image = ImageIO.read(file.toFile());
    assertNotNull(image, "decodes as an image");
    assertEquals(2 * Chart.PANEL_WIDTH, image.getWidth());
    assertEquals(Chart.HEADER + Chart.PANEL_HEIGHT, image.getHeight());
    assertTrue(colours(image, 0, Chart.HEADER) > 4, "throughput panel drawn");
    assertTrue(colours(image, Chart.PANEL_WIDTH, Chart.HEADER) > 4, "PostgreSQL CPU panel drawn");
  }

  @Test
  void stepsAreOneTwoOrFiveTimesAPowerOfTen() {
    assertEquals(10_000, Chart.step(41_683));
    assertEquals(5_000, Chart.step(18_549));
    assertEquals(200, Chart.step(924));
    assertEquals(2, Chart.step(9.1));
    assertEquals(0.1, Chart.step(0.42), 1e-12);
    assertEquals(1, Chart.step(0));
  }

  private static void assertPng(Path file) throws Exception {
    assertTrue(Files.isRegularFile(file), file + " written");
    byte[] bytes = Files.readAllBytes(file);
    assertArrayEquals(PNG_SIGNATURE, Arrays.copyOf(bytes, PNG_SIGNATURE.length), "PNG signature");
    BufferedImage image = ImageIO.read(file.toFile());
    assertNotNull(image, "decodes as an image");
    assertEquals(2 * Chart.PANEL_WIDTH, image.getWidth());
    assertEquals(Chart.HEADER + 2 * Chart.PANEL_HEIGHT, image.getHeight());
    // something was drawn in each of the three panels, not a blank canvas
    assertTrue(colours(image, 0, Chart.HEADER) > 4, "throughput panel drawn");
    assertTrue(colours(image, Chart.PANEL_WIDTH, Chart.HEADER) > 4, "p99 panel drawn");
    assertTrue(colours(image, Chart.PANEL_WIDTH / 2, Chart.HEADER + Chart.PANEL_HEIGHT) > 4, "acknowledgement panel drawn");
  }

  private static long colours(BufferedImage image, int x0, int y0) {
    return java.util.stream.IntStream.range(0, Chart.PANEL_WIDTH * Chart.PANEL_HEIGHT)
        .map(i -> image.getRGB(x0 + i % Chart.PANEL_WIDTH, y0 + i / Chart.PANEL_WIDTH)).distinct().count();
  }

  /** Figures of the committed docs/bench/results.md. */
  static List<Chart.Series> fullRun() {
    return List.of(
        series("checkpoint-request, batching", new Color(33, 102, 172), 6_476, 11_141, 15_460, 22.9, 42.8, 125.8),
        series("checkpoint-request, no batching", new Color(214, 96, 77), 1_626, 1_858, 1_758, 262.4, 169.9, 639.8),
        series("GET /whoami (HTTP + JWT only)", new Color(120, 120, 120), 37_162, 37_894, 30_859, 7.9, 14.5, 69.9));
  }

  static List<Chart.Ack> fullRunAck() {
    return List.of(new Chart.Ack("idle source", new AckLatency.Result(200, 1.4, 9.1, 12.7)),
        new Chart.Ack("under load (256 connections)", new AckLatency.Result(100, 2.4, 16.6, 21.3)));
  }

  /** Sub-millisecond latencies, a few hundred requests/s, and a series that lacks its 1024-connection point. */
  static List<Chart.Series> quickRun() {
    return List.of(
        series("checkpoint-request, batching", new Color(33, 102, 172), 412, 655, 702, 0.31, 0.42, 0.38),
        new Chart.Series("checkpoint-request, no batching", new Color(214, 96, 77),
            List.of(new double[] {64, 95}, new double[] {256, 120}), List.of(new double[] {64, 0.12}, new double[] {256, 0.2})));
  }

  static List<Chart.Ack> quickRunAck() {
    return List.of(new Chart.Ack("idle source", new AckLatency.Result(50, 0.2, 0.9, 1.1)),
        new Chart.Ack("under load (256 connections)", new AckLatency.Result(30, 0.4, 3.2, 3.2)));
  }

  /** Figures of the committed docs/bench/compare.md (2026-12-02). */
  static List<Chart.Compared> comparison() {
    return List.of(new Chart.Compared("POST 1000/64", 4_176, 11_535, 76.1, 45.0),
        new Chart.Compared("POST 1000/256", 1_971, 15_030, 67.2, 36.5),
        new Chart.Compared("GET 1/64", 6_011, 17_715, 46.2, 20.7),
        new Chart.Compared("GET 1000/256", 3_153, 18_897, 43.3, 29.9),
        new Chart.Compared("POST 1000/256 ×2", 5_639, 15_231, 73.8, 37.3));
  }

  private static Chart.Series series(String name, Color color, double t64, double t256, double t1024, double p64, double p256,
      double p1024) {
    return new Chart.Series(name, color, List.of(new double[] {64, t64}, new double[] {256, t256}, new double[] {1024, t1024}),
        List.of(new double[] {64, p64}, new double[] {256, p256}, new double[] {1024, p1024}));
  }

  /** Writes full.png, quick.png and compare.png to the folder given (default target/chart-preview) to look at. */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args.length > 0 ? args[0] : "target/chart-preview");
    Files.createDirectories(dir);
    Chart.write(dir.resolve("full.png"), fullRun(), fullRunAck(), "Ackpoint, 1000 users, loopback, 2 cores");
    Chart.write(dir.resolve("quick.png"), quickRun(), quickRunAck(), "Ackpoint, quick run");
    Chart.writeComparison(dir.resolve("compare.png"), comparison(), "The reference beside Ackpoint");
    System.out.println("wrote " + dir.toAbsolutePath());
  }
}
