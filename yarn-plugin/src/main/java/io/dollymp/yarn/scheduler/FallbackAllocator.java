package io.dollymp.yarn.scheduler;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * The built-in policy that keeps the cluster scheduling while the decision service is down: FIFO
 * by application id with fair sharing, i.e. round-robin one container per application per pass,
 * each application's asks in YARN priority order, multi-resource fit (dominant resource calculator),
 * never on a node (or rack) the application blacklisted, a strict ask (relaxLocality=false) only where it
 * names, and within the queues' maximum capacities and user limits ({@link FallbackLimits}).
 */
final class FallbackAllocator {
  private final DollyMPScheduler scheduler;
  private final ContainerLedger ledger;

  FallbackAllocator(DollyMPScheduler scheduler, ContainerLedger ledger) {
    this.scheduler = scheduler;
    this.ledger = ledger;
  }

  /** Assigns containers on {@code node}; returns how many. */
  int assign(FiCaSchedulerNode node) {
    List<ShimAppAttempt> attempts = new ArrayList<>();
    for (SchedulerApplication<ShimAppAttempt> app : scheduler.applicationsInOrder()) {
      ShimAppAttempt a = app.getCurrentAppAttempt();
      if (a != null && !a.isStopped()) {
        attempts.add(a);
      }
    }
    FallbackLimits limits = new FallbackLimits(scheduler.calculator(), scheduler.getClusterResource(), attempts);
    int total = 0;
    boolean progress = true;
    while (progress) {
      progress = false;
      for (ShimAppAttempt attempt : attempts) {
        if (assignOne(node, attempt, limits)) {
          total++;
          progress = true;
        }
      }
    }
    return total;
  }

  /**
   * One container for {@code attempt} on {@code node}, if any of its asks fits. isWaitingForAMContainer()
   * is read first, outside the attempt's locks (it takes the RMAppAttempt's read lock, whose writer may
   * be inside allocate() waiting for the attempt's monitor); commitContainer then takes the attempt's
   * monitor and write lock in YARN's order and re-checks the ask.
   */
  private boolean assignOne(FiCaSchedulerNode node, ShimAppAttempt attempt, FallbackLimits limits) {
    boolean am = attempt.isWaitingForAMContainer();
    for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
      PendingAsk ask = attempt.getPendingAsk(key, ResourceRequest.ANY);
      if (ask.getCount() <= 0) {
        continue;
      }
      if (!Resources.fitsIn(scheduler.calculator(), ask.getPerAllocationResource(), node.getUnallocatedResource())) {
        continue;
      }
      if (am && !ledger.amShareAllows(ask.getPerAllocationResource())) {
        continue;
      }
      if (limits.refuses(attempt, ask.getPerAllocationResource()) != null) {
        continue; // the queue is at its maximum, or the user at its limit
      }
      if (attempt.strictLocalityRefuses(node, key) != null) {
        continue; // relaxLocality=false: only the places the ask names
      }
      if (attempt.blacklistedPlace(node) != null) {
        ledger.blacklistSkips.incrementAndGet(); // as YARN's schedulers do: the attempt gets nothing on this node
        return false;
      }
      RMContainer c = PlanCommitter.create(node, attempt, key, ask.getPerAllocationResource());
      if (c != null) {
        ledger.committed(node, c, DollyMPScheduler.Source.FALLBACK, "", am);
        limits.add(attempt, ask.getPerAllocationResource());
        return true;
      }
    }
    return false;
  }
}
