package io.ackpoint.bench;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** A two-panel PNG (throughput and p99 against connections), drawn with Java2D so the benchmark needs nothing else. */
final class Chart {

  record Series(String name, Color color, List<double[]> throughput, List<double[]> p99) {
  }

  private Chart() {
  }

  static void write(Path file, List<Series> series, String title) throws IOException {
    int width = 1100;
    int height = 460;
    BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, width, height);
    g.setColor(Color.BLACK);
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
    g.drawString(title, 20, 25);
    panel(g, series, true, 60, 60, 460, 330, "successful requests/s");
    panel(g, series, false, 600, 60, 460, 330, "p99 latency (ms)");
    int x = 60;
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
    for (Series s : series) {
      g.setColor(s.color());
      g.fillRect(x, 432, 14, 14);
      g.setColor(Color.BLACK);
      g.drawString(s.name(), x + 20, 444);
      x += 30 + g.getFontMetrics().stringWidth(s.name()) + 20;
    }
    g.dispose();
    ImageIO.write(image, "png", file.toFile());
  }

  private static void panel(Graphics2D g, List<Series> series, boolean throughput, int x0, int y0, int w, int h, String label) {
    double max = 0;
    for (Series s : series) {
      for (double[] p : throughput ? s.throughput() : s.p99()) {
        max = Math.max(max, p[1]);
      }
    }
    max = max <= 0 ? 1 : max * 1.1;
    g.setStroke(new BasicStroke(1f));
    g.setColor(Color.BLACK);
    g.drawRect(x0, y0, w, h);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    g.drawString(label, x0, y0 - 8);
    double[] xs = {64, 256, 1024};
    for (double c : xs) {
      int px = x0 + (int) (w * (Math.log(c / 48) / Math.log(1400.0 / 48)));
      g.drawString(Integer.toString((int) c), px - 10, y0 + h + 16);
    }
    g.drawString("connections", x0 + w / 2 - 30, y0 + h + 32);
    for (int i = 0; i <= 4; i++) {
      int py = y0 + h - h * i / 4;
      g.setColor(new Color(230, 230, 230));
      g.drawLine(x0 + 1, py, x0 + w - 1, py);
      g.setColor(Color.DARK_GRAY);
      g.drawString(String.format(max / 4 * i >= 100 ? "%.0f" : "%.1f", max / 4 * i), x0 - 50, py + 4);
    }
    for (Series s : series) {
      g.setColor(s.color());
      g.setStroke(new BasicStroke(2.5f));
      int[] last = null;
      for (double[] p : throughput ? s.throughput() : s.p99()) {
        int px = x0 + (int) (w * (Math.log(p[0] / 48) / Math.log(1400.0 / 48)));
        int py = y0 + h - (int) (h * p[1] / max);
        g.fillOval(px - 4, py - 4, 8, 8);
        if (last != null) {
          g.drawLine(last[0], last[1], px, py);
        }
        last = new int[] {px, py};
      }
    }
  }
}
