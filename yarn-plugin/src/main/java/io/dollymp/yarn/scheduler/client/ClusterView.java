package io.dollymp.yarn.scheduler.client;

import io.dollymp.proto.v1.Plan;
import io.dollymp.proto.v1.StateBatch;

/**
 * What the client thread needs from the scheduler side. Implementations never block on the
 * network and hold the scheduler's lock only briefly.
 */
public interface ClusterView {
  /**
   * Fills {@code batch} with the complete state (full) or with what changed since the last call
   * (delta). A full snapshot also resets the change tracking.
   */
  void fillBatch(StateBatch.Builder batch, boolean full);

  /** Hands a plan from the service to the commit side (the RM's event thread commits it later). */
  void acceptPlan(Plan plan);

  /** The session was lost: pending proposals are void. */
  void sessionLost();
}
