package io.dollymp.yarn.scheduler;

import io.dollymp.yarn.scheduler.client.SessionStateMachine;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;

/**
 * What a node's heartbeat places (the RM's event thread, under the scheduler's monitor): the service's kill
 * requests and proposals for the node while the session accepts plans ({@link PlanCommitter}), else, once
 * the fallback is due, the {@link FallbackAllocator}'s containers.
 */
final class HeartbeatPlacement {
  private final DollyMPScheduler scheduler;
  private final SessionStateMachine session;
  private final ContainerLedger ledger;
  private final Outbox outbox;
  private final PlanCommitter committer;
  private final FallbackAllocator fallback;
  private final PlanBook planBook;
  private volatile long lastFallbackCommitMs = -1;
  private volatile long lastFallbackHeartbeatMs = -1;

  HeartbeatPlacement(DollyMPScheduler scheduler, SessionStateMachine session, ContainerLedger ledger, Outbox outbox,
      PlanBook planBook) {
    this.scheduler = scheduler;
    this.session = session;
    this.ledger = ledger;
    this.outbox = outbox;
    this.planBook = planBook;
    this.committer = new PlanCommitter(scheduler, outbox, planBook, ledger);
    this.fallback = new FallbackAllocator(scheduler, ledger);
  }

  void assign(FiCaSchedulerNode node, long now) {
    committer.expire(now, scheduler.shimConfig().planMaxAgeMs());
    if (recoveryWait()) {
      // After an RM restart or failover, nothing new is placed until the NodeManagers had
      // yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms to re-register with their
      // containers (as CapacityScheduler waits): until then the cluster looks emptier than it is.
      committer.dropAllFor(node);
      return;
    }
    if (session.acceptsPlans()) {
      committer.commitKills();
      committer.commitFor(node, now, scheduler.shimConfig().planMaxAgeMs());
    } else {
      committer.dropAllFor(node);
      if (scheduler.shimConfig().fallbackPolicy() == ShimConfig.FallbackPolicy.FIFO
          && session.fallbackDue(scheduler.shimConfig().fallbackAfterMs())) {
        lastFallbackHeartbeatMs = now;
        int placed = fallback.assign(node);
        if (placed > 0) {
          lastFallbackCommitMs = now;
          ledger.fallbackContainers.addAndGet(placed);
          outbox.fallbackSinceLastBatch = true;
        }
      }
    }
  }

  /**
   * Commits every waiting proposal and kill request now, node by node, not waiting for the nodes' heartbeats
   * ({@link ShimConfig#COMMIT} "plan"; {@link PlanArrivalCommits}' thread, under the scheduler's monitor).
   * Each proposal is re-validated exactly as on a heartbeat. Nothing is committed while the session does not
   * accept plans or the RM waits for its NodeManagers after a restart: the heartbeats then drop the proposals.
   * Returns the containers committed.
   */
  int commitWaiting(long now) {
    long maxAgeMs = scheduler.shimConfig().planMaxAgeMs();
    committer.expire(now, maxAgeMs);
    if (recoveryWait() || !session.acceptsPlans()) {
      return 0;
    }
    if (planBook.hasKills()) {
      committer.commitKills();
    }
    int total = 0;
    for (String nodeId : planBook.nodesWithProposals()) {
      FiCaSchedulerNode node = scheduler.nodeNamed(nodeId);
      if (node != null) { // a node the RM does not know: its proposals expire
        total += committer.commitFor(node, now, maxAgeMs);
      }
    }
    return total;
  }

  private boolean recoveryWait() {
    RMContext rmContext = scheduler.context();
    return rmContext.isWorkPreservingRecoveryEnabled() && !rmContext.isSchedulerReadyForAllocatingContainers();
  }

  /** Wall-clock time of the latest container placed by the fallback policy (-1: none yet). */
  long lastFallbackCommitMs() {
    return lastFallbackCommitMs;
  }

  /** Wall-clock time of the latest node heartbeat the fallback policy handled (-1: none yet). */
  long lastFallbackHeartbeatMs() {
    return lastFallbackHeartbeatMs;
  }
}
