package io.ackpoint.cluster;

/**
 * Whether this node leads: holds the follower lock of its replication slot, and so runs the
 * follower and applies external progress. Written by {@link Leadership}, read by the status
 * verticle on another event loop. A standalone Ackpoint always leads.
 */
public final class NodeRole {

  private volatile boolean leading;

  public static NodeRole standalone() {
    NodeRole role = new NodeRole();
    role.leading = true;
    return role;
  }

  public boolean leading() {
    return leading;
  }

  void leading(boolean leading) {
    this.leading = leading;
  }
}
