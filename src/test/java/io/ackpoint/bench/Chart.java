package io.ackpoint.bench;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.CategorySeries;
import org.knowm.xchart.CategorySeries.CategorySeriesRenderStyle;
import org.knowm.xchart.style.CategoryStyler;
import org.knowm.xchart.style.Styler.LegendLayout;
import org.knowm.xchart.style.Styler.LegendPosition;
import org.knowm.xchart.style.markers.SeriesMarkers;

import javax.imageio.ImageIO;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;

/**
 * docs/bench/chart.png, drawn with XChart: successful requests/s and p99 latency against connections
 * (one line per series, connections on evenly spaced categories 64, 256, 1024), and acknowledgement
 * latency (p50, p99 and max, idle source against under load) as grouped bars. The three charts are
 * composed into one PNG under a title line. Renders headless.
 */
final class Chart {

  /** Points are {connections, value}: throughput in successful requests/s, p99 in milliseconds. */
  record Series(String name, Color color, List<double[]> throughput, List<double[]> p99) {
  }

  /** One acknowledgement-latency measurement, named for the legend ("idle source", "under load"). */
  record Ack(String name, AckLatency.Result result) {
  }

  static final int PANEL_WIDTH = 640;
  static final int PANEL_HEIGHT = 440;
  static final int HEADER = 44;

  private static final Color[] ACK_COLORS = {new Color(67, 147, 195), new Color(244, 165, 130)};
  private static final Font BASE = new Font(Font.SANS_SERIF, Font.PLAIN, 13);

  private Chart() {
  }

  /**
   * One case of the side-by-side comparison ({@code scripts/bench --compare}), the mean of its rounds:
   * successful requests/s and PostgreSQL CPU-ms per 1,000 of them, for the reference and Ackpoint.
   */
  record Compared(String category, double referenceOk, double ackpointOk, double referencePgMs, double ackpointPgMs) {
  }

  private static final Color REFERENCE = new Color(150, 150, 150);
  private static final Color ACKPOINT = new Color(33, 102, 172);

  /** Writes one PNG: throughput and p99 side by side, acknowledgement latency beneath them. */
  static void write(Path file, List<Series> series, List<Ack> ack, String title) throws IOException {
    compose(file, title, List.of(throughput(series), p99(series), ackLatency(ack)));
  }

  /** Writes one PNG: each case's successful requests/s and PostgreSQL CPU per 1,000 of them, side by side. */
  static void writeComparison(Path file, List<Compared> cases, String title) throws IOException {
    compose(file, title, List.of(
        compared(cases, "Successful requests/s (higher is better)", "2xx/s", Compared::referenceOk, Compared::ackpointOk),
        compared(cases, "PostgreSQL CPU per 1,000 of them (lower is better)", "CPU-ms",
            Compared::referencePgMs, Compared::ackpointPgMs)));
  }

  /** The panels two to a row under the title, a last one alone centred. */
  private static void compose(Path file, String title, List<CategoryChart> charts) throws IOException {
    int rows = (charts.size() + 1) / 2;
    int width = 2 * PANEL_WIDTH;
    int height = HEADER + rows * PANEL_HEIGHT;
    BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, width, height);
      g.setColor(new Color(40, 40, 40));
      g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
      g.drawString(title, 20, 30);
      for (int i = 0; i < charts.size(); i++) {
        boolean alone = i == charts.size() - 1 && i % 2 == 0;
        int x = alone ? (width - PANEL_WIDTH) / 2 : (i % 2) * PANEL_WIDTH;
        g.drawImage(BitmapEncoder.getBufferedImage(charts.get(i)), x, HEADER + (i / 2) * PANEL_HEIGHT, null);
      }
    } finally {
      g.dispose();
    }
    if (!ImageIO.write(image, "png", file.toFile())) {
      throw new IOException("no PNG writer");
    }
  }

  static CategoryChart throughput(List<Series> series) {
    CategoryChart chart = lineChart("Throughput against connections", "successful requests/s");
    for (Series s : series) {
      line(chart, series, s, s.throughput());
    }
    roundAxis(chart, max(series, true));
    return chart;
  }

  static CategoryChart p99(List<Series> series) {
    CategoryChart chart = lineChart("p99 latency against connections", "p99 latency (ms)");
    for (Series s : series) {
      line(chart, series, s, s.p99());
    }
    roundAxis(chart, max(series, false));
    return chart;
  }

  static CategoryChart ackLatency(List<Ack> ack) {
    CategoryChart chart = barChart("Acknowledgement latency (response → stream line)", "", "ms");
    double max = 0;
    for (int i = 0; i < ack.size(); i++) {
      AckLatency.Result r = ack.get(i).result();
      CategorySeries bars = chart.addSeries(String.format(Locale.ROOT, "%s, %d samples", ack.get(i).name(), r.samples()),
          List.of("p50", "p99", "max"), List.of(shown(r.p50ms()), shown(r.p99ms()), shown(r.maxMs())));
      bars.setFillColor(ACK_COLORS[i % ACK_COLORS.length]);
      max = Math.max(max, r.maxMs());
    }
    // headroom above the tallest bar for its value label and for the legend
    roundAxis(chart, max * 1.25);
    return chart;
  }

  static CategoryChart compared(List<Compared> cases, String title, String yTitle, ToDoubleFunction<Compared> reference,
                                ToDoubleFunction<Compared> ackpoint) {
    CategoryChart chart = barChart(title, "method users/connections (×2: on two nodes)", yTitle);
    List<String> categories = cases.stream().map(Compared::category).toList();
    List<Double> ours = cases.stream().map(c -> (double) Math.round(ackpoint.applyAsDouble(c))).toList();
    List<Double> theirs = cases.stream().map(c -> (double) Math.round(reference.applyAsDouble(c))).toList();
    chart.addSeries("reference", categories, theirs).setFillColor(REFERENCE);
    chart.addSeries("Ackpoint", categories, ours).setFillColor(ACKPOINT);
    double max = 0;
    for (Compared c : cases) {
      max = Math.max(max, Math.max(reference.applyAsDouble(c), ackpoint.applyAsDouble(c)));
    }
    // headroom above the tallest bar for its value label and for the legend
    roundAxis(chart, max * 1.25);
    return chart;
  }

  /** Grouped bars with their values on them, the legend inside at the top left; {@code xTitle} empty for none. */
  private static CategoryChart barChart(String title, String xTitle, String yTitle) {
    CategoryChart chart = new CategoryChartBuilder().width(PANEL_WIDTH).height(PANEL_HEIGHT).title(title)
        .xAxisTitle(xTitle).yAxisTitle(yTitle).build();
    CategoryStyler styler = style(chart.getStyler());
    styler.setDefaultSeriesRenderStyle(CategorySeriesRenderStyle.Bar);
    styler.setLegendPosition(LegendPosition.InsideNW);
    styler.setLegendLayout(LegendLayout.Vertical);
    styler.setAvailableSpaceFill(0.7);
    styler.setLabelsVisible(true);
    styler.setLabelsFont(BASE.deriveFont(12f));
    styler.setLabelsFontColorAutomaticEnabled(false);
    styler.setLabelsFontColor(new Color(40, 40, 40));
    styler.setLabelsPosition(0.9);
    return chart;
  }

  /** A latency as results.md shows it, to 0.1 ms (0.01 ms below 1 ms), so that the bar's label is as short. */
  private static double shown(double ms) {
    double unit = ms < 1 ? 100 : 10;
    return Math.round(ms * unit) / unit;
  }

  private static CategoryChart lineChart(String title, String yTitle) {
    CategoryChart chart = new CategoryChartBuilder().width(PANEL_WIDTH).height(PANEL_HEIGHT)
        .title(title).xAxisTitle("concurrent connections").yAxisTitle(yTitle).build();
    CategoryStyler styler = style(chart.getStyler());
    styler.setDefaultSeriesRenderStyle(CategorySeriesRenderStyle.Line);
    styler.setOverlapped(true);
    styler.setLegendPosition(LegendPosition.OutsideS);
    styler.setLegendLayout(LegendLayout.Vertical);
    styler.setMarkerSize(9);
    return chart;
  }

  private static CategoryStyler style(CategoryStyler styler) {
    styler.setBaseFont(BASE);
    styler.setChartTitleFont(BASE.deriveFont(Font.BOLD, 15f));
    styler.setAxisTitleFont(BASE);
    styler.setAxisTickLabelsFont(BASE.deriveFont(12f));
    styler.setLegendFont(BASE.deriveFont(12f));
    styler.setChartBackgroundColor(Color.WHITE);
    styler.setPlotBackgroundColor(Color.WHITE);
    styler.setPlotBorderColor(new Color(160, 160, 160));
    styler.setPlotGridLinesColor(new Color(225, 225, 225));
    styler.setPlotGridVerticalLinesVisible(false);
    styler.setLegendBorderColor(new Color(200, 200, 200));
    styler.setChartTitleBoxVisible(false);
    styler.setAxisTickMarksColor(new Color(160, 160, 160));
    styler.setAxisTickLabelsColor(new Color(60, 60, 60));
    styler.setLocale(Locale.ROOT);
    styler.setChartPadding(12);
    styler.setPlotContentSize(0.95);
    styler.setAxisTicksLineVisible(false);
    return styler;
  }

  private static void line(CategoryChart chart, List<Series> all, Series s, List<double[]> points) {
    List<String> x = new ArrayList<>();
    List<Double> y = new ArrayList<>();
    for (double connections : connections(all)) {
      double value = Double.NaN;
      for (double[] p : points) {
        if (p[0] == connections) {
          value = p[1];
        }
      }
      x.add(connections == Math.rint(connections) ? Long.toString((long) connections) : Double.toString(connections));
      y.add(value);
    }
    CategorySeries line = chart.addSeries(s.name(), x, y);
    line.setLineColor(s.color());
    line.setMarkerColor(s.color());
    line.setFillColor(s.color());
    line.setLineWidth(2.5f);
    line.setMarker(SeriesMarkers.CIRCLE);
  }

  /** Every series of a category chart needs the same categories: the connection counts of all series, ascending. */
  private static TreeSet<Double> connections(List<Series> series) {
    TreeSet<Double> xs = new TreeSet<>();
    for (Series s : series) {
      s.throughput().forEach(p -> xs.add(p[0]));
      s.p99().forEach(p -> xs.add(p[0]));
    }
    return xs;
  }

  private static double max(List<Series> series, boolean throughput) {
    double max = 0;
    for (Series s : series) {
      for (double[] p : throughput ? s.throughput() : s.p99()) {
        if (Double.isFinite(p[1])) {
          max = Math.max(max, p[1]);
        }
      }
    }
    return max;
  }

  /**
   * The y axis from 0 to a round number just above the data; XChart puts its ticks on a round step within it. Labels with
   * grouped thousands and no trailing zeros: 0, 2,500, 5,000 or 0, 0.5, 1. Bar labels use the same format.
   */
  private static void roundAxis(CategoryChart chart, double max) {
    double step = step(max);
    CategoryStyler styler = chart.getStyler();
    styler.setYAxisMin(0.0);
    styler.setYAxisMax(Math.max(step, Math.ceil(max * 1.05 / step) * step));
    DecimalFormat format = new DecimalFormat("#,##0.###", DecimalFormatSymbols.getInstance(Locale.ROOT));
    styler.setYAxisTickLabelsFormattingFunction(format::format);
  }

  /** A 1, 2 or 5 times a power of ten that cuts 0..max into about five intervals. */
  static double step(double max) {
    if (!(max > 0) || !Double.isFinite(max)) {
      return 1;
    }
    double raw = max / 5;
    double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    double fraction = raw / magnitude;
    return (fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10) * magnitude;
  }
}
