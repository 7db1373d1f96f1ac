package io.dollymp.yarn.scheduler;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;
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
 * The single queue the shim exposes, "default" (path "root.default"), under the parent "root" that
 * clients ask for ({@code yarn queue -status root}, {@code yarn top}); ordering between jobs is the
 * service's job. Names follow CapacityScheduler's: a leaf by short name or full path, the parent only
 * by "root"; any other name is an unknown queue.
 */
final class ShimQueue implements Queue {
  static final String NAME = "default";
  static final String ROOT = "root";
  static final String PATH = ROOT + "." + NAME;

  private final QueueMetrics metrics;
  private final ActiveUsersManager usersManager;
  private final Supplier<Resource> cluster;
  private final Supplier<Resource> used;
  private final Consumer<RMContainer> recovered;

  ShimQueue(QueueMetrics metrics, Supplier<Resource> cluster, Supplier<Resource> used,
      Consumer<RMContainer> recovered) {
    this.recovered = recovered;
    this.metrics = metrics;
    this.usersManager = new ActiveUsersManager(metrics);
    this.cluster = cluster;
    this.used = used;
  }

  @Override
  public String getQueueName() {
    return NAME;
  }

  @Override
  public QueueMetrics getMetrics() {
    return metrics;
  }

  /** True for the names of the one leaf queue applications run in: "default" and "root.default". */
  static boolean isLeaf(String name) {
    return NAME.equals(name) || PATH.equals(name);
  }

  /** True for every queue name clients may ask about: the leaf's and "root". */
  static boolean isKnown(String name) {
    return isLeaf(name) || ROOT.equals(name);
  }

  /**
   * Why an application submitted to {@code queueName} is refused, or null when the name is the leaf's.
   * Worded like CapacityScheduler's rejections, naming the queue and the one the shim has.
   */
  static String rejection(Object appId, String user, String queueName) {
    if (isLeaf(queueName)) {
      return null;
    }
    String why = ROOT.equals(queueName) ? " to non-leaf queue: " : " to unknown queue: ";
    return "Application " + appId + " submitted by user " + user + why + queueName
        + " (the DollyMP scheduler has one queue, " + NAME + " = " + PATH + ")";
  }

  /**
   * The queue called {@code queueName}: the leaf, or "root" (with the leaf as its child when
   * {@code includeChildQueues}). CapacityScheduler's answer for any other name: "Unknown queue: name".
   */
  QueueInfo getQueueInfo(String queueName, boolean includeChildQueues, boolean recursive) throws IOException {
    if (isLeaf(queueName)) {
      return getQueueInfo(includeChildQueues, recursive);
    }
    if (!ROOT.equals(queueName)) {
      throw new IOException("Unknown queue: " + queueName);
    }
    List<QueueInfo> children = new ArrayList<>();
    if (includeChildQueues) {
      children.add(getQueueInfo(false, false));
    }
    return QueueInfo.newInstance(ROOT, ROOT, 1.0f, 1.0f, usedShare(), children, new ArrayList<>(),
        QueueState.RUNNING, Collections.emptySet(), "", statistics(), false, -1.0f, 10);
  }

  @Override
  public QueueInfo getQueueInfo(boolean includeChildQueues, boolean recursive) {
    return QueueInfo.newInstance(NAME, PATH, 1.0f, 1.0f, usedShare(), new ArrayList<>(),
        new ArrayList<>(), QueueState.RUNNING, Collections.emptySet(), "", statistics(), false, -1.0f, 10);
  }

  /** The larger of the memory and vcore shares in use (the dominant share). */
  private float usedShare() {
    Resource total = cluster.get();
    Resource inUse = used.get();
    float mem = total.getMemorySize() == 0 ? 0f : (float) inUse.getMemorySize() / total.getMemorySize();
    float cores = total.getVirtualCores() == 0 ? 0f : (float) inUse.getVirtualCores() / total.getVirtualCores();
    return Math.max(mem, cores);
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

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo(UserGroupInformation user) {
    return Collections.singletonList(QueueUserACLInfo.newInstance(NAME, Arrays.asList(QueueACL.values())));
  }

  @Override
  public boolean hasAccess(QueueACL acl, UserGroupInformation user) {
    return true;
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
      recovered.accept(container);
    }
  }
}
