package io.dollymp.yarn.scheduler;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerImpl;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;

/**
 * The shim's view of one application attempt: YARN's FiCa bookkeeping (asks, live containers,
 * usage, metrics, blacklists) plus one operation, turning a validated proposal into an RM container.
 */
public class ShimAppAttempt extends FiCaSchedulerApp {
  /**
   * A copy of the RM's AM blacklist for this attempt (nodes where earlier AM containers failed), which
   * YARN's AppSchedulingInfo keeps but does not expose: the service must see it to avoid those nodes.
   */
  private final Set<String> amBlacklist = new HashSet<>();

  public ShimAppAttempt(ApplicationAttemptId attemptId, String user, Queue queue,
      AbstractUsersManager usersManager, RMContext rmContext) {
    super(attemptId, user, queue, usersManager, rmContext);
  }

  /**
   * Applies an allocate call's blacklist changes (YARN's updateBlacklist: the AM blacklist while the AM
   * container is pending, the application's own afterwards); returns true when there were any.
   */
  public boolean updateBlacklistChanged(List<String> additions, List<String> removals) {
    boolean any = additions != null && !additions.isEmpty() || removals != null && !removals.isEmpty();
    if (!any) {
      return false;
    }
    boolean am = isWaitingForAMContainer();
    updateBlacklist(additions, removals);
    if (am) {
      synchronized (amBlacklist) {
        if (additions != null) {
          amBlacklist.addAll(additions);
        }
        if (removals != null) {
          amBlacklist.removeAll(removals);
        }
      }
    }
    return true;
  }

  /** The places (host, node or rack names) this attempt's pending asks must not go to, sorted. */
  public Set<String> blacklistForAsks() {
    if (isWaitingForAMContainer()) {
      synchronized (amBlacklist) {
        return new TreeSet<>(amBlacklist);
      }
    }
    return new TreeSet<>(getBlacklistedNodes());
  }

  /**
   * The name by which {@code node} is blacklisted for this attempt (its node name, else its rack), or
   * null: what YARN's schedulers check before placing a container (SchedulerAppUtils.isPlaceBlacklisted).
   */
  public String blacklistedPlace(SchedulerNode node) {
    if (isPlaceBlacklisted(node.getNodeName())) {
      return node.getNodeName();
    }
    return isPlaceBlacklisted(node.getRackName()) ? node.getRackName() : null;
  }

  /**
   * Why a container of {@code key} may not go to {@code node} under strict locality (relaxLocality=false),
   * or null, by the rules YARN's schedulers apply: off-switch only if the ANY request relaxes; rack-local
   * only if the rack is asked for and its request relaxes; node-local where the node itself is asked for.
   */
  public String strictLocalityRefuses(SchedulerNode node, SchedulerRequestKey key) {
    if (appSchedulingInfo.canDelayTo(key, ResourceRequest.ANY)) {
      return null;
    }
    if (getOutstandingAsksCount(key, node.getNodeName()) > 0) {
      return null;
    }
    if (getOutstandingAsksCount(key, node.getRackName()) > 0 && appSchedulingInfo.canDelayTo(key, node.getRackName())) {
      return null;
    }
    return node.getNodeName() + " is not among the places priority " + key.getPriority().getPriority()
        + " asks for with relaxLocality=false";
  }

  /**
   * Registers {@code container} as allocated to this attempt at {@code key}. Returns null when the
   * attempt stopped or the ask is no longer outstanding (the AM may update asks concurrently on its
   * RPC thread, so this and the locality are decided under the attempt's write lock).
   *
   * <p>Lock order: the attempt's monitor, then its write lock -- the order of YARN's own allocate path
   * (AM RPC thread: synchronized(attempt), then updateResourceRequests) and of
   * addToNewlyAllocatedContainers (synchronized) called below. Taking the write lock first deadlocks
   * with a concurrent AM heartbeat. Callers must not hold RMAppAttempt locks or call
   * isWaitingForAMContainer() inside this (it reads the RMAppAttempt under its read lock).
   */
  public synchronized RMContainer commitContainer(FiCaSchedulerNode node, SchedulerRequestKey key,
      Container container) {
    writeLock.lock();
    try {
      if (isStopped || getOutstandingAsksCount(key) <= 0) {
        return null;
      }
      NodeType locality = localityOf(node, key);
      RMContainerImpl rmContainer = new RMContainerImpl(container, key, getApplicationAttemptId(),
          node.getNodeID(), appSchedulingInfo.getUser(), rmContext, node.getPartition());
      rmContainer.setQueueName(getQueueName());
      addToNewlyAllocatedContainers(node, rmContainer);
      liveContainers.put(container.getId(), rmContainer);
      rmContainer.setContainerRequest(appSchedulingInfo.allocate(locality, node, key, rmContainer));
      attemptResourceUsage.incUsed(node.getPartition(), container.getResource());
      rmContainer.handle(new RMContainerEvent(container.getId(), RMContainerEventType.START));
      return rmContainer;
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * How YARN's locality bookkeeping must count a container of {@code key} on {@code node}: node-local
   * only when both the node's and its rack's requests are outstanding (YARN decrements both),
   * rack-local when the rack's is, otherwise off-switch.
   */
  private NodeType localityOf(FiCaSchedulerNode node, SchedulerRequestKey key) {
    boolean rack = getOutstandingAsksCount(key, node.getRackName()) > 0;
    if (rack && getOutstandingAsksCount(key, node.getNodeName()) > 0) {
      return NodeType.NODE_LOCAL;
    }
    return rack ? NodeType.RACK_LOCAL : NodeType.OFF_SWITCH;
  }
}
