package io.ackpoint.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The greatest checkpoint id of each full user id among those added, in the order users were first
 * added: what one announcement tells each user, once (rows duplicated by older installs, a user
 * marked by two statements or released by two batches never tell a lower id after a higher one).
 */
public final class GreatestIds {

  private final Map<FullUserId, Long> byUser = new LinkedHashMap<>();

  public void add(FullUserId user, long id) {
    byUser.merge(user, id, Math::max);
  }

  public List<Reached> reached() {
    List<Reached> reached = new ArrayList<>(byUser.size());
    byUser.forEach((user, id) -> reached.add(new Reached(user, id)));
    return reached;
  }
}
