package io.ackpoint.embedded;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Which lines of the embedded PostgreSQL's output an operator needs: those that stop it or its start
 * (FATAL, PANIC, pg_ctl's own, initdb's errors), with the DETAIL and HINT lines that follow them
 * (where the reason is: "initialized by PostgreSQL version 16", "Is another postmaster running").
 * They are logged at error as {@code io.ackpoint.embedded.PostgreSQL}, from the output of the
 * commands that start and stop it, and from the server's own log files once its log collector runs.
 */
public final class ServerProblems {

  private static final Logger LOG = LoggerFactory.getLogger("io.ackpoint.embedded.PostgreSQL");

  /** pg_ctl's lines but its warning before a start that goes on (a server that died left its lock file). */
  private static final Pattern PROBLEM = Pattern.compile("\\b(FATAL|PANIC):|pg_ctl: (?!another server might be running)|initdb: error: ");
  private static final Pattern SUPPLEMENT = Pattern.compile("\\b(DETAIL|HINT):|initdb: (detail|hint): ");
  /** The first line a server writes to its log collector's file at each start. */
  private static final String STARTING = "starting PostgreSQL";

  private ServerProblems() {
  }

  /**
   * Reads one stream of the server's lines, in order, and logs those an operator needs: a problem,
   * and the DETAIL and HINT lines right after it.
   */
  private static final class Reader {

    private boolean afterProblem;

    void read(String line) {
      boolean problem = PROBLEM.matcher(line).find();
      afterProblem = problem || afterProblem && SUPPLEMENT.matcher(line).find();
      if (afterProblem) {
        LOG.error("{}", line);
      }
    }
  }

  /**
   * Logs the problems among what the library's commands wrote to {@code output} (initdb, pg_ctl, and
   * the server until its log collector runs), then deletes the file: a command that runs later
   * creates it again. Best effort, as for the log files.
   */
  static void logOutput(Path output) {
    try {
      // Decoded leniently: the server writes in its locale's encoding.
      new String(Files.readAllBytes(output), StandardCharsets.UTF_8).lines().forEach(new Reader()::read);
    } catch (IOException | RuntimeException unreadable) {
      // Nothing to tell.
    }
    try {
      Files.deleteIfExists(output);
    } catch (IOException e) {
      // A few lines left in the temporary directory.
    }
  }

  /**
   * Logs the problems of the start that began at {@code attempted}, from the newest file of the log
   * collector in {@code logDirectory}: a start fails there once the collector runs (a crash recovery
   * that cannot find its checkpoint, a port taken meanwhile), not in the output of pg_ctl.
   * Lines of earlier starts are left alone. Best effort: a log that cannot be read says nothing.
   */
  static void logLastStart(Path logDirectory, Instant attempted) {
    try (Stream<Path> files = Files.list(logDirectory)) {
      Optional<Path> newest = files.filter(Files::isRegularFile)
          .max(Comparator.comparing(ServerProblems::modified));
      if (newest.isEmpty() || modified(newest.get()).toInstant().isBefore(attempted)) {
        return;
      }
      List<String> lines = Files.readAllLines(newest.get());
      int start = 0;
      for (int i = 0; i < lines.size(); i++) {
        if (lines.get(i).contains(STARTING)) {
          start = i;
        }
      }
      lines.subList(start, lines.size()).forEach(new Reader()::read);
    } catch (IOException | RuntimeException unreadable) {
      // Nothing more to tell than the failure itself.
    }
  }

  private static FileTime modified(Path file) {
    try {
      return Files.getLastModifiedTime(file);
    } catch (IOException e) {
      return FileTime.fromMillis(0);
    }
  }
}
