package io.ackpoint;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.AppenderBase;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import io.ackpoint.config.AckpointConfig.LogConfig;
import io.ackpoint.config.AckpointConfig.LogFormat;
import io.ackpoint.embedded.ServerProblems;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;


/**
 * The runnable service's logging, set from {@code log.*}: Logback to standard output, as text or as
 * JSON lines ({@code timestamp}, {@code level}, {@code loggerName}, {@code message}, the request id
 * in {@code mdc}). Only the shells (Main, TokenTool) call this: an application that embeds Ackpoint
 * keeps its own logging.
 */
final class Logging {

  private Logging() {
  }

  /**
   * Nothing is logged until {@link #configure}: reading the configuration already logs (Vert.x's
   * JSON announces its logger when an {@code ACKPOINT_*} value is a JSON document), and Logback's
   * default would print that at DEBUG on standard output, as text even where JSON lines are asked for,
   * and before the token of {@code scripts/token}. A configuration that cannot be read is told on
   * standard error, not through the log.
   */
  static void silenceUntilConfigured() {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    context.reset();
    context.getLogger(Logger.ROOT_LOGGER_NAME).setLevel(Level.OFF);
  }

  static void configure(LogConfig config) {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    context.reset();
    Encoder<ILoggingEvent> encoder = config.format() == LogFormat.JSON ? json(context) : text(context);
    ConsoleAppender<ILoggingEvent> console = new ConsoleAppender<>();
    console.setContext(context);
    console.setName("console");
    console.setEncoder(encoder);
    console.start();
    ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.toLevel(config.level(), Level.INFO));
    root.addAppender(console);
    // The embedded PostgreSQL's own chatter says nothing an operator needs, but its problems do: the
    // library logs every line of the server's output at info, a FATAL (data directory of another
    // version, a stale lock file, wrong permissions) included, and without that line a failed start
    // only says that the library gave up waiting. Its lines go through EmbeddedPostgresProblems alone,
    // which logs the problems at error, where an operator's alerts look.
    ch.qos.logback.classic.Logger library = context.getLogger("io.zonky");
    library.setLevel(Level.INFO);
    library.setAdditive(false);
    EmbeddedPostgresProblems problems = new EmbeddedPostgresProblems(console);
    problems.setContext(context);
    problems.start();
    library.addAppender(problems);
    // Vert.x's metrics register one event-bus gauge per verticle context; Micrometer warns of the
    // repeats once, which would read like a fault at every start.
    context.getLogger("io.micrometer.core.instrument.MeterRegistry").setLevel(Level.ERROR);
    // Hazelcast (cluster mode) logs its internals at info; membership changes are kept (ClusterService).
    context.getLogger("com.hazelcast").setLevel(Level.WARN);
    context.getLogger("com.hazelcast.internal.cluster").setLevel(Level.INFO);
    // Ackpoint uses no CP data structure (its lock is a map lock), so the warning that they would be unsafe does not apply.
    context.getLogger("com.hazelcast.cp.CPSubsystem").setLevel(Level.ERROR);
  }

  private static Encoder<ILoggingEvent> text(LoggerContext context) {
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(context);
    encoder.setPattern("%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{36}%replace( request=%X{request_id}){' request=$', ''} - %msg%n");
    encoder.start();
    return encoder;
  }

  private static Encoder<ILoggingEvent> json(LoggerContext context) {
    JsonEncoder encoder = new JsonEncoder();
    encoder.setContext(context);
    encoder.setWithSequenceNumber(false);
    encoder.setWithNanoseconds(false);
    encoder.setWithContext(false);
    encoder.setWithArguments(false);
    encoder.setWithFormattedMessage(true);
    encoder.setWithMessage(false);
    encoder.start();
    return encoder;
  }

  /**
   * The embedded PostgreSQL's library, between it and the console: the server's output lines an
   * operator needs ({@link ServerProblems}) are logged at error; the rest of the server's output is
   * dropped (a statement's ERROR, and its DETAIL with the row's values, is Ackpoint's to report), and
   * the library's own warnings and errors pass as they are.
   */
  private static final class EmbeddedPostgresProblems extends AppenderBase<ILoggingEvent> {

    private final Appender<ILoggingEvent> console;
    /**
     * Best effort: each process the library starts (initdb, the server, pg_ctl stop) has its own reader
     * thread, but a server's lines come from one of them. doAppend serializes the calls.
     */
    private final ServerProblems.Reader lines = new ServerProblems.Reader();

    EmbeddedPostgresProblems(Appender<ILoggingEvent> console) {
      this.console = console;
    }

    @Override
    protected void append(ILoggingEvent event) {
      if (event.getLevel().isGreaterOrEqual(Level.WARN)) {
        console.doAppend(event);
      } else {
        lines.read(event.getFormattedMessage());
      }
    }
  }
}
