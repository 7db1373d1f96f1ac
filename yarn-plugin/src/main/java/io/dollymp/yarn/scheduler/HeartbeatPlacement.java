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
  private volatile long lastFallbackCommitMs = -1;
  private volatile long lastFallbackHeartbeatMs = -1;

  HeartbeatPlacement(DollyMPScheduler scheduler, SessionStateMachine session, ContainerLedger ledger, Outbox outbox,
      PlanBook planBook) {
    this.scheduler = scheduler;
    this.session = session;
    this.ledger = ledger;
    this.outbox = outbox;
    this.committer = new PlanCommitter(scheduler, outbox, planBook, ledger);
    this.fallback = new FallbackAllocator(scheduler, ledger);
  }

  void assign(FiCaSchedulerNode node, long now) {
    committer.expire(now, scheduler.shimConfig().planMaxAgeMs());
    RMContext rmContext = scheduler.context();
    if (rmContext.isWorkPreservingRecoveryEnabled() && !rmContext.isSchedulerReadyForAllocatingContainers()) {
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

  /** Wall-clock time of the latest container placed by the fallback policy (-1: none yet). */
  long lastFallbackCommitMs() {
    return lastFallbackCommitMs;
  }

  /** Wall-clock time of the latest node heartbeat the fallback policy handled (-1: none yet). */
  long lastFallbackHeartbeatMs() {
    return lastFallbackHeartbeatMs;
  }
}
