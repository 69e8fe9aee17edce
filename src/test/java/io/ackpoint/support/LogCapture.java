package io.ackpoint.support;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;

/** What a logger logs while a test runs, as Logback events. */
public final class LogCapture implements AutoCloseable {

  private final Logger logger;
  private final Level levelBefore;
  /** Adds under its own lock (AppenderBase.doAppend), from the threads that log, and wakes who awaits. */
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>() {
    @Override
    protected void append(ILoggingEvent event) {
      super.append(event);
      notifyAll();
    }
  };

  private LogCapture(Logger logger, Level level) {
    this.logger = logger;
    this.levelBefore = logger.getLevel();
    if (level != null) {
      logger.setLevel(level);
    }
    appender.start();
    logger.addAppender(appender);
  }

  public static LogCapture of(String loggerName) {
    return new LogCapture((Logger) LoggerFactory.getLogger(loggerName), null);
  }

  /** Also the events down to {@code level} (DEBUG…), which the logger may not log otherwise. */
  public static LogCapture of(String loggerName, String level) {
    return new LogCapture((Logger) LoggerFactory.getLogger(loggerName), Level.toLevel(level));
  }

  /** Waits until an event at {@code level} has been logged (another thread logs it), and answers its message. */
  public String awaitMessage(String level, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (appender) {
      while (messages(level).isEmpty()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError("nothing logged at " + level + " by " + logger.getName() + " within " + timeout);
        }
        appender.wait(Math.max(1, left / 1_000_000));
      }
    }
    return messages(level).get(0);
  }

  /** The formatted messages of the events at {@code level} (WARN, ERROR…). */
  public List<String> messages(String level) {
    List<ILoggingEvent> events;
    synchronized (appender) {
      events = List.copyOf(appender.list);
    }
    return events.stream().filter(e -> e.getLevel().toString().equals(level)).map(ILoggingEvent::getFormattedMessage).toList();
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
    appender.stop();
    logger.setLevel(levelBefore);
  }
}
