package io.dollymp.yarn.scheduler;

import java.util.ArrayList;
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
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ActiveUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;

/** The single queue the shim exposes ("default"); ordering between jobs is the service's job. */
final class ShimQueue implements Queue {
  static final String NAME = "default";

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

  @Override
  public QueueInfo getQueueInfo(boolean includeChildQueues, boolean recursive) {
    Resource total = cluster.get();
    float usedShare = total.getMemorySize() == 0 ? 0f
        : Math.max((float) used.get().getMemorySize() / total.getMemorySize(),
            total.getVirtualCores() == 0 ? 0f : (float) used.get().getVirtualCores() / total.getVirtualCores());
    return QueueInfo.newInstance(NAME, "root." + NAME, 1.0f, 1.0f, usedShare, new ArrayList<>(),
        Collections.emptyList(), QueueState.RUNNING, Collections.emptySet(), "", null, false, -1.0f, 10);
  }

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo(UserGroupInformation user) {
    return Collections.singletonList(QueueUserACLInfo.newInstance(NAME, List.of(QueueACL.values())));
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
