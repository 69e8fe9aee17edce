package io.ackpoint;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import io.ackpoint.config.AckpointConfig.LogConfig;
import io.ackpoint.config.AckpointConfig.LogFormat;
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
    // The embedded PostgreSQL's library says nothing at info an operator needs; the server's problems
    // are logged at error by ServerProblems.
    context.getLogger("io.zonky").setLevel(Level.WARN);
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
}
