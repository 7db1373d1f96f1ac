package io.dollymp.yarn.scheduler;

import io.dollymp.proto.v1.ContainerInfo;
import io.dollymp.proto.v1.Placement;
import io.dollymp.proto.v1.PlacementOutcomeKind;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * Commits the service's proposals for one node on that node's heartbeat (RM event thread), after
 * re-validating each against the RM's truth: node running, attempt alive, ask still pending, node
 * (and rack) not blacklisted by the attempt, inside a strict ask's places, fits in every resource dimension. Every proposal ends in an
 * outcome reported to the service.
 */
final class PlanCommitter {
  private final DollyMPScheduler scheduler;
  private final Outbox outbox;
  private final PlanBook planBook;
  private final ContainerLedger ledger;

  PlanCommitter(DollyMPScheduler scheduler, Outbox outbox, PlanBook planBook, ContainerLedger ledger) {
    this.scheduler = scheduler;
    this.outbox = outbox;
    this.planBook = planBook;
    this.ledger = ledger;
  }

  void expire(long nowMs, long maxAgeMs) {
    outbox.outcomes.addAll(planBook.expire(nowMs, maxAgeMs));
  }

  /** The session is not running: proposals that raced with its loss are void. */
  void dropAllFor(FiCaSchedulerNode node) {
    planBook.take(node.getNodeID().toString());
  }

  /**
   * Carries out the service's kill requests (Plan.kill_container_ids: a clone yielding its container to
   * a waiting original, service/round/yielding.py): each live, non-AM container named is preempted if it
   * belongs to the application the plan names for it; the rest are refused and logged. Returns how many were
   * preempted.
   */
  int commitKills() {
    int done = 0;
    for (PlanBook.Kill kill : planBook.takeKills()) {
      String id = kill.containerId();
      String refused = preempt(id, kill.applicationId());
      if (refused == null) {
        planBook.killsCommitted.incrementAndGet();
        done++;
      } else {
        planBook.killsRefused.incrementAndGet();
        DollyMPScheduler.LOG.info("DollyMP: kill of container {} refused: {}", id, refused);
      }
    }
    return done;
  }

  /**
   * Preempts a container the service named in a plan's kill list (RM event thread): its AM sees exit
   * status PREEMPTED, which MapReduce treats as a killed attempt (not a failure). Returns null when
   * done, else why not: an ApplicationMaster's container is never killed this way, nor one of another
   * application than {@code applicationId}, and a container that is unknown or already finished is left
   * alone.
   */
  String preempt(String containerId, String applicationId) {
    synchronized (scheduler) {
      ContainerId id;
      try {
        id = ContainerId.fromString(containerId);
      } catch (IllegalArgumentException e) {
        return "kill_container_ids: not a container id: " + containerId;
      }
      RMContainer c = scheduler.getRMContainer(id);
      if (c == null || c.getState() == RMContainerState.COMPLETED || c.getState() == RMContainerState.KILLED
          || c.getState() == RMContainerState.RELEASED || c.getState() == RMContainerState.EXPIRED) {
        return "no live container " + containerId;
      }
      if (c.isAMContainer() || ledger.isAmContainer(id)) {
        return "container " + containerId + " runs an ApplicationMaster";
      }
      String owner = c.getApplicationAttemptId().getApplicationId().toString();
      if (!owner.equals(applicationId)) {
        return "kill_application_ids: container " + containerId + " belongs to " + owner + ", not '"
            + applicationId + "'";
      }
      scheduler.completedContainer(c, SchedulerUtils.createPreemptedContainerStatus(id,
          "Preempted by DollyMP at the decision service's request (a clone yielding to a waiting task, or a queue "
              + "taking back its guarantee; the decision log has the reason)"), RMContainerEventType.KILL);
      return null;
    }
  }

  int commitFor(FiCaSchedulerNode node, long nowMs, long maxAgeMs) {
    int total = 0;
    for (PlanBook.Proposal p : planBook.take(node.getNodeID().toString())) {
      if (!planBook.isCurrent(p)) {
        continue;
      }
      total += commitOne(node, p, nowMs, maxAgeMs);
    }
    return total;
  }

  private int commitOne(FiCaSchedulerNode node, PlanBook.Proposal proposal, long nowMs, long maxAgeMs) {
    Placement pl = proposal.placement();
    if (nowMs - proposal.receivedMs() > maxAgeMs) {
      return drop(pl, PlacementOutcomeKind.PLACEMENT_DROPPED_EXPIRED, pl.getCount(), "older than " + maxAgeMs + " ms");
    }
    if (node.getRMNode().getState() != NodeState.RUNNING) {
      return drop(pl, PlacementOutcomeKind.PLACEMENT_DROPPED_NODE_NOT_RUNNING, pl.getCount(),
          "node is " + node.getRMNode().getState());
    }
    ShimAppAttempt attempt;
    try {
      attempt = scheduler.getApplicationAttempt(ApplicationAttemptId.fromString(pl.getAttemptId()));
    } catch (IllegalArgumentException e) {
      attempt = null;
    }
    if (attempt == null || attempt.isStopped()
        || !attempt.getApplicationAttemptId().toString().equals(pl.getAttemptId())) {
      return drop(pl, PlacementOutcomeKind.PLACEMENT_DROPPED_APP_UNKNOWN, pl.getCount(),
          "attempt " + pl.getAttemptId() + " is not running");
    }
    SchedulerRequestKey key = findKey(attempt, pl);
    PendingAsk pending = key == null ? null : attempt.getPendingAsk(key, ResourceRequest.ANY);
    if (pending == null || pending.getCount() <= 0) {
      return drop(pl, PlacementOutcomeKind.PLACEMENT_DROPPED_ASK_NOT_PENDING, pl.getCount(),
          "no pending ask at priority " + pl.getPriority());
    }
    String blacklisted = attempt.blacklistedPlace(node);
    if (blacklisted != null) {
      DollyMPScheduler.LOG.info("DollyMP: placement {} of {} on {} refused: {} is blacklisted by the application",
          pl.getPlacementId(), pl.getAttemptId(), pl.getNodeId(), blacklisted);
      return drop(pl, PlacementOutcomeKind.PLACEMENT_DROPPED_BLACKLISTED, pl.getCount(),
          blacklisted + " is blacklisted by " + pl.getAttemptId());
    }
    String strict = attempt.strictLocalityRefuses(node, key);
    if (strict != null) {
      return drop(pl, PlacementOutcomeKind.PLACEMENT_DROPPED_LOCALITY, pl.getCount(), strict);
    }
    int wanted = Math.min(pl.getCount(), pending.getCount());
    Resource capability = pending.getPerAllocationResource();
    boolean am = attempt.isWaitingForAMContainer();
    if (am && !ledger.amShareAllows(capability)) {
      return drop(pl, PlacementOutcomeKind.PLACEMENT_DROPPED_AM_SHARE_CAP, pl.getCount(),
          "ApplicationMaster containers would exceed the AM share cap");
    }
    int done = 0;
    while (done < wanted && Resources.fitsIn(scheduler.calculator(), capability, node.getUnallocatedResource())) {
      RMContainer c = create(node, attempt, key, capability);
      if (c == null) {
        break;
      }
      ledger.committed(node, c, DollyMPScheduler.Source.SERVICE, pl.getPlacementId(), am);
      done++;
      if (am) {
        break; // one AM container per attempt
      }
    }
    if (done > 0) {
      outbox.outcomes.add(planBook.outcome(pl, PlacementOutcomeKind.PLACEMENT_COMMITTED, done, ""));
    }
    int rest = pl.getCount() - done;
    if (rest > 0) {
      boolean stillPending = attempt.getPendingAsk(key, ResourceRequest.ANY).getCount() > 0;
      drop(pl, stillPending ? PlacementOutcomeKind.PLACEMENT_DROPPED_DOES_NOT_FIT
          : PlacementOutcomeKind.PLACEMENT_DROPPED_ASK_NOT_PENDING, rest,
          stillPending ? "free " + node.getUnallocatedResource() + " < " + capability : "ask satisfied");
    }
    return done;
  }

  private int drop(Placement pl, PlacementOutcomeKind kind, int containers, String detail) {
    outbox.outcomes.add(planBook.outcome(pl, kind, containers, detail));
    return 0;
  }

  private static SchedulerRequestKey findKey(ShimAppAttempt attempt, Placement pl) {
    for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
      if (key.getPriority().getPriority() == pl.getPriority()
          && key.getAllocationRequestId() == pl.getAllocationRequestId()) {
        return key;
      }
    }
    return null;
  }

  /** Creates one container of {@code key} on {@code node}; null if the ask vanished meanwhile. */
  static RMContainer create(FiCaSchedulerNode node, ShimAppAttempt attempt, SchedulerRequestKey key,
      Resource capability) {
    ContainerId id = BuilderUtils.newContainerId(attempt.getApplicationAttemptId(), attempt.getNewContainerId());
    Container container = BuilderUtils.newContainer(id, node.getNodeID(), node.getRMNode().getHttpAddress(),
        capability, key.getPriority(), null, key.getAllocationRequestId());
    return attempt.commitContainer(node, key, container);
  }

  /**
   * The wire's view of a live container. {@code am} comes from the shim's own record: the RM marks its
   * RMContainer as the AM only later, when the attempt's CONTAINER_ALLOCATED event is handled, so at commit
   * time {@code c.isAMContainer()} is still false.
   */
  static ContainerInfo containerInfo(RMContainer c, String placementId, boolean am) {
    return ContainerInfo.newBuilder()
        .setContainerId(c.getContainerId().toString())
        .setAttemptId(c.getApplicationAttemptId().toString())
        .setNodeId(c.getAllocatedNode().toString())
        .setPriority(c.getAllocatedSchedulerKey().getPriority().getPriority())
        .setAllocationRequestId(c.getAllocatedSchedulerKey().getAllocationRequestId())
        .setResource(ProtoResources.toProto(c.getAllocatedResource()))
        .setPlacementId(placementId)
        .setAmContainer(am || c.isAMContainer())
        .setStartTimeMs(c.getCreationTime())
        .build();
  }
}
