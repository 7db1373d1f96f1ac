package io.dollymp.yarn.scheduler;

import io.dollymp.proto.v1.ApplicationInfo;
import io.dollymp.proto.v1.Ask;
import io.dollymp.proto.v1.NodeInfo;
import io.dollymp.proto.v1.NodeState;
import io.dollymp.proto.v1.Plan;
import io.dollymp.proto.v1.StateBatch;
import io.dollymp.yarn.scheduler.client.ClusterView;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.AppPlacementAllocator;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;

/**
 * Translates the RM's state into StateBatches (on the client thread): full snapshots under the
 * scheduler lock, deltas from the {@link Outbox}. Asks use replace semantics per scheduler key, so
 * the builder remembers which keys it has sent per attempt and clears vanished ones with count 0.
 */
final class BatchBuilder implements ClusterView {
  private final DollyMPScheduler scheduler;
  private final Outbox outbox;
  private final PlanBook planBook;
  private final AppDiagnostics diagnostics;
  private final ContainerLedger ledger;
  private final Map<ApplicationAttemptId, Set<SchedulerRequestKey>> sentKeys = new HashMap<>();
  private final AmTokenDigests tokens = new AmTokenDigests();

  /** Called once a plan with placements or kills is in the plan book (commits it at once under "plan"). */
  private final Runnable planArrived;

  BatchBuilder(DollyMPScheduler scheduler, Outbox outbox, PlanBook planBook, AppDiagnostics diagnostics,
      ContainerLedger ledger, Runnable planArrived) {
    this.planArrived = planArrived;
    this.scheduler = scheduler;
    this.outbox = outbox;
    this.planBook = planBook;
    this.diagnostics = diagnostics;
    this.ledger = ledger;
  }

  @Override
  public void fillBatch(StateBatch.Builder batch, boolean full) {
    if (full) {
      scheduler.locked(() -> {
        outbox.clear();
        sentKeys.clear();
        tokens.clear();
        for (FiCaSchedulerNode node : scheduler.nodes()) {
          batch.addNodesUpserted(nodeInfo(node));
        }
        for (SchedulerApplication<ShimAppAttempt> app : scheduler.applicationsInOrder()) {
          ShimAppAttempt attempt = app.getCurrentAppAttempt();
          if (attempt == null) {
            continue;
          }
          ApplicationId appId = attempt.getApplicationId();
          batch.addAppsUpserted(appInfo(appId, attempt));
          addAsks(batch, attempt);
          for (RMContainer c : attempt.getLiveContainers()) {
            ContainerId cid = c.getContainerId();
            batch.addContainersAllocated(
                PlanCommitter.containerInfo(c, ledger.placementOf(cid), ledger.isAmContainer(cid)));
          }
        }
        return null;
      });
    } else {
      for (NodeId id : Outbox.drain(outbox.removedNodes)) {
        batch.addNodesRemoved(id.toString());
      }
      for (NodeId id : Outbox.drain(outbox.dirtyNodes)) {
        FiCaSchedulerNode node = scheduler.shimNode(id);
        if (node != null) {
          batch.addNodesUpserted(nodeInfo(node));
        }
      }
      Set<ApplicationId> upserted = new HashSet<>();
      for (ApplicationId appId : Outbox.drain(outbox.dirtyApps)) {
        SchedulerApplication<ShimAppAttempt> app = scheduler.application(appId);
        if (app != null && upserted.add(appId)) {
          batch.addAppsUpserted(appInfo(appId, app.getCurrentAppAttempt()));
        }
      }
      addRolledTokens(batch, upserted);
      for (ApplicationId appId : Outbox.drain(outbox.removedApps)) {
        batch.addAppsRemoved(appId.toString());
        sentKeys.keySet().removeIf(a -> a.getApplicationId().equals(appId));
        tokens.forget(appId);
      }
      for (ApplicationAttemptId attemptId : Outbox.drain(outbox.dirtyAsks)) {
        ShimAppAttempt attempt = scheduler.getApplicationAttempt(attemptId);
        if (attempt != null && attempt.getApplicationAttemptId().equals(attemptId)) {
          addAsks(batch, attempt);
        }
      }
      batch.addAllContainersAllocated(Outbox.drain(outbox.allocated));
      batch.addAllContainersCompleted(Outbox.drain(outbox.completed));
      batch.addAllOutcomes(Outbox.drain(outbox.outcomes));
    }
    if (full || outbox.queuesChanged) {
      outbox.queuesChanged = false;
      addQueues(batch);
    }
    batch.setFallbackActive(outbox.fallbackSinceLastBatch);
    outbox.fallbackSinceLastBatch = false;
  }

  @Override
  public void acceptPlan(Plan plan) {
    outbox.outcomes.addAll(planBook.add(plan, System.currentTimeMillis()));
    diagnostics.onPlan(plan);
    if (plan.getPlacementsCount() > 0 || plan.getKillContainerIdsCount() > 0) {
      planArrived.run();
    }
  }

  @Override
  public void sessionLost() {
    planBook.invalidate();
  }

  private static NodeInfo nodeInfo(FiCaSchedulerNode node) {
    NodeState state;
    switch (node.getRMNode().getState()) {
      case RUNNING:
        state = NodeState.NODE_STATE_RUNNING;
        break;
      case DECOMMISSIONING:
        state = NodeState.NODE_STATE_DECOMMISSIONING;
        break;
      default:
        state = NodeState.NODE_STATE_UNHEALTHY;
        break;
    }
    return NodeInfo.newBuilder()
        .setNodeId(node.getNodeID().toString())
        .setRack(node.getRackName())
        .setCapacity(ProtoResources.toProto(node.getTotalResource()))
        .setAllocated(ProtoResources.toProto(node.getAllocatedResource()))
        .setState(state)
        .build();
  }

  /** Upserts the applications whose AMRMToken was issued or rolled over since the last batch. */
  private void addRolledTokens(StateBatch.Builder batch, Set<ApplicationId> upserted) {
    List<ApplicationAttemptId> current = new ArrayList<>();
    for (SchedulerApplication<ShimAppAttempt> app : scheduler.getSchedulerApplications().values()) {
      ShimAppAttempt attempt = app.getCurrentAppAttempt();
      if (attempt != null && !upserted.contains(attempt.getApplicationId())) {
        current.add(attempt.getApplicationAttemptId());
      }
    }
    for (ApplicationAttemptId id : tokens.changed(scheduler.context(), current)) {
      SchedulerApplication<ShimAppAttempt> app = scheduler.application(id.getApplicationId());
      if (app != null) {
        batch.addAppsUpserted(appInfo(id.getApplicationId(), app.getCurrentAppAttempt()));
      }
    }
  }

  private ApplicationInfo appInfo(ApplicationId appId, ShimAppAttempt attempt) {
    ApplicationInfo.Builder b = ApplicationInfo.newBuilder().setApplicationId(appId.toString());
    if (attempt != null) {
      b.setAttemptId(attempt.getApplicationAttemptId().toString())
          .setAmrmTokenSha256(tokens.digestFor(scheduler.context(), attempt.getApplicationAttemptId()));
    }
    RMApp rmApp = scheduler.context().getRMApps().get(appId);
    SchedulerApplication<ShimAppAttempt> app = scheduler.application(appId);
    if (app != null) {
      // The leaf's full path, from the scheduler's own books (a move updates them before the RMApp's).
      b.setQueue(((io.dollymp.yarn.scheduler.queue.ShimQueue) app.getQueue()).getQueuePath());
    }
    if (rmApp != null) {
      b.setUser(nullToEmpty(rmApp.getUser()))
          .setName(nullToEmpty(rmApp.getName()))
          .setSubmitTimeMs(rmApp.getSubmitTime())
          .setApplicationType(nullToEmpty(rmApp.getApplicationType()));
      if (rmApp.getApplicationPriority() != null) {
        b.setPriority(rmApp.getApplicationPriority().getPriority());
      }
    }
    return b.build();
  }

  private void addAsks(StateBatch.Builder batch, ShimAppAttempt attempt) {
    ApplicationAttemptId attemptId = attempt.getApplicationAttemptId();
    Set<SchedulerRequestKey> previous = sentKeys.getOrDefault(attemptId, Collections.<SchedulerRequestKey>emptySet());
    Set<SchedulerRequestKey> now = new HashSet<>();
    if (!attempt.isStopped()) {
      boolean am = attempt.isWaitingForAMContainer();
      Set<String> blacklist = attempt.blacklistForAsks();
      for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
        PendingAsk pending = attempt.getPendingAsk(key, ResourceRequest.ANY);
        if (pending.getCount() <= 0) {
          continue;
        }
        Ask.Builder ask = Ask.newBuilder()
            .setAttemptId(attemptId.toString())
            .setPriority(key.getPriority().getPriority())
            .setAllocationRequestId(key.getAllocationRequestId())
            .setCapability(ProtoResources.toProto(pending.getPerAllocationResource()))
            .setNumContainers(pending.getCount())
            .setRelaxLocality(true)
            .setAmContainer(am)
            .addAllBlacklist(blacklist);
        AppPlacementAllocator<?> placement = attempt.getAppPlacementAllocator(key);
        if (placement != null) {
          for (Map.Entry<String, ResourceRequest> e : placement.getResourceRequests().entrySet()) {
            if (ResourceRequest.ANY.equals(e.getKey())) {
              ask.setRelaxLocality(e.getValue().getRelaxLocality());
            } else if (e.getValue().getNumContainers() > 0) {
              ask.addLocations(e.getKey());
            }
          }
        }
        batch.addAsks(ask);
        now.add(key);
      }
    }
    for (SchedulerRequestKey gone : previous) {
      if (!now.contains(gone)) {
        batch.addAsks(Ask.newBuilder()
            .setAttemptId(attemptId.toString())
            .setPriority(gone.getPriority().getPriority())
            .setAllocationRequestId(gone.getAllocationRequestId())
            .setNumContainers(0));
      }
    }
    if (now.isEmpty()) {
      sentKeys.remove(attemptId);
    } else {
      sentKeys.put(attemptId, now);
    }
  }

  /** The leaf queues with their absolute shares (replace semantics: queues_set). */
  private void addQueues(StateBatch.Builder batch) {
    batch.setQueuesSet(true);
    for (io.dollymp.yarn.scheduler.queue.ShimQueue q : scheduler.queues().leaves()) {
      batch.addQueues(shareInfo(q));
    }
  }

  /**
   * One leaf on the wire: absolute shares, user-limit-factor as configured (-1: no limit), the AM percent the
   * leaf has (its own key, else the global one; 0 when neither is set: no per-queue AM limit) and after how long
   * its originals may be preempted (0: never), and its minimum-user-limit-percent.
   */
  static io.dollymp.proto.v1.QueueShareInfo shareInfo(io.dollymp.yarn.scheduler.queue.ShimQueue q) {
    float am = q.settings().maximumAmResourcePercent();
    return io.dollymp.proto.v1.QueueShareInfo.newBuilder()
        .setPath(q.getQueuePath())
        .setGuaranteed(q.absoluteCapacity())
        .setMaximum(Math.max(q.absoluteCapacity(), q.absoluteMaximumCapacity()))
        .setUserLimitFactor(q.settings().userLimitFactor())
        .setMaximumAmResourcePercent(Float.isNaN(am) ? 0.0 : am)
        .setPreemptOriginalsAfterMs(q.settings().preemptOriginalsAfterMs())
        .setMinimumUserLimitPercent(q.settings().minimumUserLimitPercent())
        .build();
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }
}
