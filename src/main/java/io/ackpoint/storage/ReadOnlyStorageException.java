package io.ackpoint.storage;

/**
 * Storage answers but takes no writes: every batch would fail, and every acknowledgement statement,
 * so readiness must not say ready.
 */
public final class ReadOnlyStorageException extends RuntimeException {

  public ReadOnlyStorageException() {
    super("storage takes no writes: its database is read-only (default_transaction_read_only is on, or it is a standby)",
        null, false, false);
  }
}
