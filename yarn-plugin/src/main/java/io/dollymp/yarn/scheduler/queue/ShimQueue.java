package io.dollymp.yarn.scheduler.queue;

import io.dollymp.yarn.compat.LineApi;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.api.records.QueueStatistics;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ActiveUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.util.Records;

/**
 * One queue of the shim's tree (a parent or a leaf; applications run in leaves). Its settings are
 * swapped in place by {@code -refreshQueues}, so applications keep their queue object. Usage is read
 * from its QueueMetrics, which YARN's bookkeeping fills and propagates to the parent. Ordering and
 * shares between jobs are the decision service's; the tree answers names, ACLs and the RM's queries.
 */
public final class ShimQueue implements Queue {
  private final QueueTree tree;
  private final ShimQueue parent;
  private final QueueMetrics metrics;
  private final ActiveUsersManager usersManager;
  final List<ShimQueue> children = new CopyOnWriteArrayList<ShimQueue>();
  private volatile QueueSettings settings;

  ShimQueue(QueueTree tree, ShimQueue parent, QueueSettings settings, QueueMetrics metrics) {
    this.tree = tree;
    this.parent = parent;
    this.settings = settings;
    this.metrics = metrics;
    this.usersManager = new ActiveUsersManager(metrics);
  }

  void update(QueueSettings next) {
    this.settings = next;
  }

  public QueueSettings settings() {
    return settings;
  }

  public ShimQueue parent() {
    return parent;
  }

  public List<ShimQueue> childQueues() {
    return Collections.unmodifiableList(children);
  }

  @Override
  public String getQueueName() {
    return settings.name();
  }

  public String getQueuePath() {
    return settings.path();
  }

  public boolean isLeaf() {
    return settings.isLeaf();
  }

  /** STOPPED when this queue or any ancestor is: a stopped parent stops its whole subtree. */
  public QueueState effectiveState() {
    for (ShimQueue q = this; q != null; q = q.parent) {
      if (q.settings.state() == QueueState.STOPPED) {
        return QueueState.STOPPED;
      }
    }
    return QueueState.RUNNING;
  }

  /** Guaranteed capacity as a fraction of the cluster (the product of the percentages down the tree). */
  public float absoluteCapacity() {
    return (parent == null ? 1f : parent.absoluteCapacity()) * settings.capacity() / 100f;
  }

  /** Maximum capacity as a fraction of the cluster. */
  public float absoluteMaximumCapacity() {
    return (parent == null ? 1f : parent.absoluteMaximumCapacity()) * settings.maximumCapacity() / 100f;
  }

  @Override
  public QueueMetrics getMetrics() {
    return metrics;
  }

  /** Resources the queue's containers hold (its subtree's, for a parent). */
  public Resource used() {
    return metrics.getAllocatedResources();
  }

  @Override
  public QueueInfo getQueueInfo(boolean includeChildQueues, boolean recursive) {
    List<QueueInfo> childInfos = new ArrayList<QueueInfo>();
    if (includeChildQueues) {
      for (ShimQueue child : children) {
        childInfos.add(child.getQueueInfo(recursive, recursive));
      }
    }
    QueueSettings s = settings;
    return LineApi.queueInfo(s.name(), s.path(), s.capacity() / 100f, s.maximumCapacity() / 100f,
        usedCapacity(), childInfos, new ArrayList<org.apache.hadoop.yarn.api.records.ApplicationReport>(),
        effectiveState(), Collections.<String>emptySet(), "", statistics(), false);
  }

  /** Used resources over the guaranteed capacity, by the dominant resource (CapacityScheduler's "used capacity"). */
  public float usedCapacity() {
    Resource total = tree.clusterResource();
    float guaranteed = absoluteCapacity();
    if (guaranteed <= 0f) {
      return 0f;
    }
    Resource inUse = used();
    float mem = total.getMemorySize() == 0 ? 0f : (float) inUse.getMemorySize() / total.getMemorySize();
    float cores = total.getVirtualCores() == 0 ? 0f : (float) inUse.getVirtualCores() / total.getVirtualCores();
    return Math.max(mem, cores) / guaranteed;
  }

  /** Applications, users and resources of the queue from its QueueMetrics ({@code yarn top} shows these). */
  private QueueStatistics statistics() {
    QueueStatistics s = Records.newRecord(QueueStatistics.class);
    s.setNumAppsSubmitted(metrics.getAppsSubmitted());
    s.setNumAppsRunning(metrics.getAppsRunning());
    s.setNumAppsPending(metrics.getAppsPending());
    s.setNumAppsCompleted(metrics.getAppsCompleted());
    s.setNumAppsKilled(metrics.getAppsKilled());
    s.setNumAppsFailed(metrics.getAppsFailed());
    s.setNumActiveUsers(metrics.getActiveUsers());
    s.setAvailableMemoryMB(metrics.getAvailableMB());
    s.setAllocatedMemoryMB(metrics.getAllocatedMB());
    s.setPendingMemoryMB(metrics.getPendingMB());
    s.setReservedMemoryMB(metrics.getReservedMB());
    s.setAvailableVCores(metrics.getAvailableVirtualCores());
    s.setAllocatedVCores(metrics.getAllocatedVirtualCores());
    s.setPendingVCores(metrics.getPendingVirtualCores());
    s.setReservedVCores(metrics.getReservedVirtualCores());
    s.setAllocatedContainers(metrics.getAllocatedContainers());
    s.setPendingContainers(metrics.getPendingContainers());
    s.setReservedContainers(metrics.getReservedContainers());
    return s;
  }

  /** The ACLs {@code user} holds on this queue and every queue below it. */
  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo(UserGroupInformation user) {
    List<QueueACL> held = new ArrayList<QueueACL>();
    for (QueueACL acl : QueueACL.values()) {
      if (hasAccess(acl, user)) {
        held.add(acl);
      }
    }
    List<QueueUserACLInfo> out = new ArrayList<QueueUserACLInfo>();
    out.add(QueueUserACLInfo.newInstance(settings.path(), held));
    for (ShimQueue child : children) {
      out.addAll(child.getQueueUserAclInfo(user));
    }
    return out;
  }

  /**
   * CapacityScheduler's rule: a user allowed by this queue's ACL or any ancestor's may act here. With
   * {@code yarn.acl.enable} off everyone may; a member of {@code yarn.admin.acl} always may.
   */
  @Override
  public boolean hasAccess(QueueACL acl, UserGroupInformation user) {
    if (!tree.aclsEnabled() || user != null && tree.isAdmin(user)) {
      return true;
    }
    if (user == null) {
      return false;
    }
    for (ShimQueue q = this; q != null; q = q.parent) {
      QueueSettings s = q.settings;
      if ((acl == QueueACL.SUBMIT_APPLICATIONS ? s.submitAcl() : s.administerAcl()).isUserAllowed(user)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public AbstractUsersManager getAbstractUsersManager() {
    return usersManager;
  }

  @Override
  public Set<String> getAccessibleNodeLabels() {
    return Collections.emptySet();
  }

  @Override
  public String getDefaultNodeLabelExpression() {
    return "";
  }

  @Override
  public void incPendingResource(String nodeLabel, Resource resourceToInc) {
    // Pending resources are tracked by QueueMetrics through AppSchedulingInfo.
  }

  @Override
  public void decPendingResource(String nodeLabel, Resource resourceToDec) {
    // Pending resources are tracked by QueueMetrics through AppSchedulingInfo.
  }

  @Override
  public Priority getDefaultApplicationPriority() {
    return Priority.newInstance(0);
  }

  @Override
  public void incReservedResource(String partition, Resource reservedRes) {
    // The shim makes no reservations.
  }

  @Override
  public void decReservedResource(String partition, Resource reservedRes) {
    // The shim makes no reservations.
  }

  @Override
  public void recoverContainer(Resource clusterResource, SchedulerApplicationAttempt attempt, RMContainer container) {
    if (container.getState() != RMContainerState.COMPLETED) {
      tree.containerRecovered(container);
    }
  }
}
