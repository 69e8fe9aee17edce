package io.ackpoint.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * The JVM options Ackpoint ships with ({@code conf/jvm.options}), for tests and benchmarks that start
 * it as a process: they run it as {@code scripts/run} and the image do.
 */
public final class JvmOptions {

  private JvmOptions() {
  }

  /** As {@code scripts/run} reads them: split on blanks, comment lines aside. */
  public static List<String> shipped() {
    try {
      return Files.readAllLines(Path.of("conf/jvm.options")).stream()
          .map(String::strip)
          .filter(line -> !line.isEmpty() && !line.startsWith("#"))
          .flatMap(line -> Arrays.stream(line.split("\\s+")))
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
