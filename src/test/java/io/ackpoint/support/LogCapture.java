package io.ackpoint.support;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;

import java.util.List;

/** What a logger logs while a test runs, as Logback events. */
public final class LogCapture implements AutoCloseable {

  private final Logger logger;
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  private LogCapture(Logger logger) {
    this.logger = logger;
    appender.start();
    logger.addAppender(appender);
  }

  public static LogCapture of(String loggerName) {
    return new LogCapture((Logger) LoggerFactory.getLogger(loggerName));
  }

  /** The formatted messages of the events at {@code level} (WARN, ERROR…). */
  public List<String> messages(String level) {
    return appender.list.stream().filter(e -> e.getLevel().toString().equals(level)).map(ILoggingEvent::getFormattedMessage).toList();
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
    appender.stop();
  }
}
