package io.dollymp.yarn.scheduler;

import io.dollymp.proto.v1.ContainerCompletion;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * What the shim's containers hold and where they came from: the resources in use (all containers', and
 * the ApplicationMasters' for the AM share cap), who placed each container and from which service
 * placement, and the counters operators read. The resource sums are guarded by the scheduler's monitor
 * ({@code lock}): every change and the AM share check take it, re-entrantly since their callers already
 * hold it; a lock of the ledger's own could be taken in another order than Hadoop's RMAppAttempt locks.
 * The sets, maps and counters are concurrent and read without it.
 */
final class ContainerLedger {
  private final Object lock;
  private final Outbox outbox;
  private final ResourceCalculator calculator;
  private final Supplier<Resource> cluster;
  private final DoubleSupplier amShareMax;
  private final Resource used = Resource.newInstance(0, 0);
  private final Resource amUsed = Resource.newInstance(0, 0);
  private final Set<ContainerId> amContainers = ConcurrentHashMap.newKeySet();
  private final Map<ContainerId, DollyMPScheduler.Source> sources = new ConcurrentHashMap<>();
  private final Map<ContainerId, String> placements = new ConcurrentHashMap<>();
  /** Node heartbeats handled on the scheduler event thread so far. */
  final AtomicLong nodeUpdatesHandled = new AtomicLong();
  /** Containers placed by the fallback policy. */
  final AtomicLong fallbackContainers = new AtomicLong();
  /** Times the fallback policy kept an application off a node it blacklisted. */
  final AtomicLong blacklistSkips = new AtomicLong();
  /** Live containers this ResourceManager took over from re-registering NodeManagers (work-preserving recovery). */
  final AtomicLong containersRecovered = new AtomicLong();

  ContainerLedger(Object lock, Outbox outbox, ResourceCalculator calculator, Supplier<Resource> cluster,
      DoubleSupplier amShareMax) {
    this.lock = lock;
    this.outbox = outbox;
    this.calculator = calculator;
    this.cluster = cluster;
    this.amShareMax = amShareMax;
  }

  /** Records a container the shim just created on {@code node}; placementId is empty for fallback. */
  void committed(FiCaSchedulerNode node, RMContainer rmContainer, DollyMPScheduler.Source source, String placementId,
      boolean am) {
    synchronized (lock) {
      node.allocateContainer(rmContainer);
      Resources.addTo(used, rmContainer.getAllocatedResource());
      if (am) {
        amContainers.add(rmContainer.getContainerId());
        Resources.addTo(amUsed, rmContainer.getAllocatedResource());
      }
      sources.put(rmContainer.getContainerId(), source);
      placements.put(rmContainer.getContainerId(), placementId);
      outbox.allocated.add(PlanCommitter.containerInfo(rmContainer, placementId, am));
      outbox.dirtyNodes.add(node.getNodeID());
      outbox.dirtyAsks.add(rmContainer.getApplicationAttemptId());
    }
  }

  /**
   * A live container reported by a NodeManager re-registering with this ResourceManager, accounted like a
   * committed one (used resources, the AM share if it runs its application's current ApplicationMaster,
   * {@code master}) and sent to the service in the next batch (a full resync sends it anyway, from the
   * attempt's live containers).
   */
  void recovered(RMContainer rmContainer, boolean master) {
    synchronized (lock) {
      ContainerId id = rmContainer.getContainerId();
      Resources.addTo(used, rmContainer.getAllocatedResource());
      if (master && amContainers.add(id)) {
        Resources.addTo(amUsed, rmContainer.getAllocatedResource());
      }
      containersRecovered.incrementAndGet();
      outbox.allocated.add(PlanCommitter.containerInfo(rmContainer, "", amContainers.contains(id)));
      outbox.dirtyAsks.add(rmContainer.getApplicationAttemptId());
    }
  }

  /** Tells the service how a container ended (whether or not its application is still known). */
  void finished(ContainerId id, ContainerStatus status, RMContainerEventType event) {
    outbox.completed.add(ContainerCompletion.newBuilder()
        .setContainerId(id.toString())
        .setExitKind(YarnGlue.exitKind(status, event))
        .setExitStatus(status.getExitStatus())
        .setFinishTimeMs(System.currentTimeMillis())
        .build());
  }

  /** Gives a completed container's resources back: on its node (null if gone), in the sums and the AM share. */
  void released(FiCaSchedulerNode node, RMContainer rmContainer, ApplicationAttemptId attemptId) {
    synchronized (lock) {
      ContainerId id = rmContainer.getContainerId();
      if (node != null) {
        node.releaseContainer(id, false);
        outbox.dirtyNodes.add(node.getNodeID());
      }
      Resources.subtractFrom(used, rmContainer.getContainer().getResource());
      if (amContainers.remove(id)) {
        Resources.subtractFrom(amUsed, rmContainer.getContainer().getResource());
      }
      placements.remove(id);
      outbox.dirtyAsks.add(attemptId);
    }
  }

  /**
   * The AM share cap: ApplicationMaster containers together may hold at most
   * {@code am-share.max} of the cluster's dominant resource, so that many small jobs cannot fill the
   * cluster with AMs whose tasks then never get room (deadlock). One AM is always allowed.
   */
  boolean amShareAllows(Resource capability) {
    synchronized (lock) {
      if (amContainers.isEmpty()) {
        return true;
      }
      Resource total = cluster.get();
      Resource after = Resources.add(amUsed, capability);
      return Resources.divide(calculator, total, after, total) <= amShareMax.getAsDouble();
    }
  }

  /** What {@code total} leaves free beyond the containers' resources (never negative). */
  Resource free(Resource total) {
    synchronized (lock) {
      return Resources.componentwiseMax(Resources.none(), Resources.subtract(total, used));
    }
  }

  /** Resources held by ApplicationMaster containers. */
  Resource amUsed() {
    return Resources.clone(amUsed);
  }

  /** Whether the shim committed or recovered {@code id} as an ApplicationMaster's container. */
  boolean isAmContainer(ContainerId id) {
    return amContainers.contains(id);
  }

  /** The service placement a live container came from ("" for fallback or recovered containers). */
  String placementOf(ContainerId id) {
    return placements.getOrDefault(id, "");
  }

  /** Who placed each container this RM allocated (decision service or fallback). */
  Map<ContainerId, DollyMPScheduler.Source> sources() {
    return Collections.unmodifiableMap(new HashMap<>(sources));
  }
}
