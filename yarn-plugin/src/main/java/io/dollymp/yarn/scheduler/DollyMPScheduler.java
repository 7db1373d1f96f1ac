package io.dollymp.yarn.scheduler;

import io.dollymp.yarn.compat.HadoopVersionCheck;
import io.dollymp.yarn.compat.LineApi;
import io.dollymp.yarn.scheduler.client.ChannelSecurity;
import io.dollymp.yarn.scheduler.client.DecisionClient;
import io.dollymp.yarn.scheduler.client.SessionStateMachine;
import io.dollymp.yarn.scheduler.queue.PreemptionKeys;
import io.dollymp.yarn.scheduler.queue.QueueConfigReader;
import io.dollymp.yarn.scheduler.queue.QueueLoader;
import io.dollymp.yarn.scheduler.queue.QueueTree;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentSkipListMap;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.nodelabels.CommonNodeLabelsManager;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerExpiredSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ReleaseContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ResourceManager scheduler shim ({@code yarn.resourcemanager.scheduler.class}). The only class
 * that speaks to the RM: it mirrors nodes, applications and asks into an {@link Outbox}, lets the
 * {@link DecisionClient} thread stream them to the DollyMP decision service, and commits the
 * service's proposals on each node's heartbeat after re-validating them ({@link PlanCommitter}).
 * When the service is unreachable or its plan is stale the {@link FallbackAllocator} schedules.
 * No policy lives here; the RM's event thread never waits on the network.
 */
public class DollyMPScheduler extends ShimSchedulerBase implements Configurable {
  static final Logger LOG = LoggerFactory.getLogger(DollyMPScheduler.class);
  static final String VERSION = "0.1.0";

  /** Who placed a container: the decision service or the shim's built-in fallback. */
  public enum Source { SERVICE, FALLBACK }

  private ShimMetrics shimMetrics;
  private Configuration conf;
  private Configuration startConf;
  private AppLifecycle lifecycle;
  private boolean usePortForNodeName;
  private BatchBuilder view;
  private PlanArrivalCommits arrivalCommits;

  public DollyMPScheduler() {
    super(DollyMPScheduler.class.getName());
  }

  // ------------------------------------------------------------------------------------------
  // Lifecycle
  // ------------------------------------------------------------------------------------------

  @Override
  public void serviceInit(Configuration configuration) throws Exception {
    // Before anything is configured: on another line's Hadoop the RM does not start, naming both versions.
    HadoopVersionCheck.requireSupported();
    this.startConf = new Configuration(configuration);
    Configuration layered = QueueLoader.layered(startConf, null, rmContext == null ? null
        : rmContext.getConfigurationProvider());
    this.shimConfig = ShimConfig.from(layered); // fails start-up naming the invalid key
    YarnGlue.installWebHooks(configuration);
    this.applications = new ConcurrentSkipListMap<>();
    this.minimumAllocation = super.getMinimumAllocation();
    initMaximumResourceCapability(super.getMaximumAllocation());
    this.usePortForNodeName = configuration.getBoolean(
        org.apache.hadoop.yarn.conf.YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME,
        org.apache.hadoop.yarn.conf.YarnConfiguration.DEFAULT_RM_SCHEDULER_USE_PORT_FOR_NODE_NAME);
    this.queues = new QueueTree(configuration, this::getClusterResource, this::containerRecovered);
    queues.setAcls(layered);
    queues.apply(QueueConfigReader.read(layered), Collections.<String, Integer>emptyMap()); // fails naming the key
    this.queueFacade = new QueueFacade(this, queues, outbox, ledger);
    this.session = new SessionStateMachine(System::currentTimeMillis);
    this.diagnostics = new AppDiagnostics(shimConfig.uiAddress(),
        (attemptId, text) -> AppLifecycle.writeDiagnostics(rmContext, attemptId, text));
    this.lifecycle = new AppLifecycle(this, queues, outbox, diagnostics);
    this.arrivalCommits = new PlanArrivalCommits(this::commitWaiting);
    BatchBuilder view = new BatchBuilder(this, outbox, planBook, diagnostics, ledger, this::planArrived);
    this.placement = new HeartbeatPlacement(this, session, ledger, outbox, planBook);
    this.view = view;
    this.client = newClient(shimConfig);
    this.shimMetrics = new ShimMetrics(session, planBook, heartbeatLatency, ledger.nodeUpdatesHandled::get,
        ledger.fallbackContainers::get, ledger.blacklistSkips::get);
    super.serviceInit(configuration);
    // CapacityScheduler's preemption policy would refuse this scheduler and stop the RM: the service does its
    // work (PreemptionKeys); any other monitor policy runs as configured.
    schedulingMonitorManager.initialize(rmContext, PreemptionKeys.forMonitors(configuration));
  }

  private DecisionClient newClient(ShimConfig c) {
    io.grpc.ChannelCredentials credentials;
    try {
      credentials = ChannelSecurity.credentials(c.tlsCaFile(), c.tlsCertFile(), c.tlsKeyFile());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("DollyMP: cannot read the TLS files of " + ShimConfig.TLS_CA_FILE
          + ", " + ShimConfig.TLS_CERT_FILE + ", " + ShimConfig.TLS_KEY_FILE, e);
    }
    return new DecisionClient(new DecisionClient.Settings(c.serviceHost(), c.servicePort(), c.rmId(), VERSION,
        c.tickMs(), c.planMaxAgeMs(), c.rpcTimeoutMs(), c.reconnectBackoffMs(), credentials, c.secret()), view,
        session, System::currentTimeMillis);
  }

  @Override
  public void serviceStart() throws Exception {
    super.serviceStart();
    shimMetrics.register();
    client.start();
  }

  @Override
  public void serviceStop() throws Exception {
    if (client != null) {
      client.stop();
    }
    if (arrivalCommits != null) {
      arrivalCommits.stop();
    }
    if (shimMetrics != null) {
      shimMetrics.unregister();
    }
    super.serviceStop();
  }

  @Override
  public synchronized void setConf(Configuration configuration) {
    this.conf = configuration;
  }

  @Override
  public synchronized Configuration getConf() {
    return conf;
  }

  @Override
  public synchronized void setRMContext(RMContext context) {
    this.rmContext = context;
  }

  @Override
  public void reinitialize(Configuration configuration, RMContext context) throws IOException {
    // yarn rmadmin -refreshQueues: the queue tree, the ACL switches and the shim's own keys, re-read and
    // validated together; a refusal changes nothing and names the key or queue.
    ShimConfig next;
    synchronized (this) {
      next = QueueRefresh.refresh(startConf, configuration, context, queues, queueFacade.applicationsByQueue());
      super.reinitialize(PreemptionKeys.forMonitors(configuration), context);
      outbox.queuesChanged = true;
    }
    if (!next.sameConnection(shimConfig) && client != null && isInState(STATE.STARTED)) {
      client = QueueRefresh.restartClient(client, next, session, view, this::newClient);
    }
    shimConfig = next;
  }

  // ------------------------------------------------------------------------------------------
  // Events (the RM's scheduler event thread)
  // ------------------------------------------------------------------------------------------

  @Override
  public void handle(SchedulerEvent event) {
    switch (event.getType()) {
      case NODE_ADDED: {
        NodeAddedSchedulerEvent e = (NodeAddedSchedulerEvent) event;
        addNodeAndRecover(e.getAddedRMNode(), e.getContainerReports());
        break;
      }
      case NODE_REMOVED:
        removeNode(((NodeRemovedSchedulerEvent) event).getRemovedRMNode());
        break;
      case NODE_RESOURCE_UPDATE: {
        NodeResourceUpdateSchedulerEvent e = (NodeResourceUpdateSchedulerEvent) event;
        updateNodeResource(e.getRMNode(), e.getResourceOption());
        outbox.dirtyNodes.add(e.getRMNode().getNodeID());
        break;
      }
      case NODE_UPDATE: {
        long t0 = System.nanoTime();
        nodeUpdate(((NodeUpdateSchedulerEvent) event).getRMNode());
        heartbeatLatency.recordNanos(System.nanoTime() - t0);
        break;
      }
      case APP_ADDED: {
        AppAddedSchedulerEvent e = (AppAddedSchedulerEvent) event;
        lifecycle.addApplication(e.getApplicationId(), e.getQueue(), e.getUser(), e.getIsAppRecovering(),
            LineApi.isUnmanagedAM(e));
        break;
      }
      case APP_REMOVED: {
        AppRemovedSchedulerEvent e = (AppRemovedSchedulerEvent) event;
        lifecycle.doneApplication(e.getApplicationID());
        break;
      }
      case APP_ATTEMPT_ADDED: {
        AppAttemptAddedSchedulerEvent e = (AppAttemptAddedSchedulerEvent) event;
        lifecycle.addApplicationAttempt(e.getApplicationAttemptId(), e.getTransferStateFromPreviousAttempt(),
            e.getIsAttemptRecovering());
        break;
      }
      case APP_ATTEMPT_REMOVED: {
        AppAttemptRemovedSchedulerEvent e = (AppAttemptRemovedSchedulerEvent) event;
        lifecycle.doneApplicationAttempt(e.getApplicationAttemptID(), e.getKeepContainersAcrossAppAttempts());
        break;
      }
      case CONTAINER_EXPIRED: {
        ContainerId id = ((ContainerExpiredSchedulerEvent) event).getContainerId();
        super.completedContainer(getRMContainer(id),
            SchedulerUtils.createAbnormalContainerStatus(id, SchedulerUtils.EXPIRED_CONTAINER),
            RMContainerEventType.EXPIRE);
        break;
      }
      case RELEASE_CONTAINER: {
        RMContainer c = ((ReleaseContainerEvent) event).getContainer();
        super.completedContainer(c,
            SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(), SchedulerUtils.RELEASED_CONTAINER),
            RMContainerEventType.RELEASED);
        break;
      }
      default:
        LOG.error("DollyMP shim ignores unknown scheduler event {}", event.getType());
    }
  }

  /**
   * A node joined, or re-registered with a new ResourceManager after a restart or failover: with
   * work-preserving recovery its containers come along (AbstractYarnScheduler.recoverContainersOnNode,
   * which calls back {@link #containerRecovered} through the queue). Under the shim's lock, so the
   * client thread's full resync sees the node with or without all of its containers, never half.
   */
  private synchronized void addNodeAndRecover(RMNode rmNode, List<NMContainerStatus> containerReports) {
    nodeTracker.addNode(new FiCaSchedulerNode(rmNode, usePortForNodeName));
    outbox.dirtyNodes.add(rmNode.getNodeID());
    recoverContainersOnNode(containerReports, rmNode);
    queueFacade.updateHeadroomAndMetrics();
  }

  private synchronized void removeNode(RMNode rmNode) {
    FiCaSchedulerNode node = nodeTracker.getNode(rmNode.getNodeID());
    if (node == null) {
      return;
    }
    for (RMContainer c : node.getCopiedListOfRunningContainers()) {
      super.completedContainer(c,
          SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(), SchedulerUtils.LOST_CONTAINER),
          RMContainerEventType.KILL);
    }
    nodeTracker.removeNode(rmNode.getNodeID());
    outbox.dirtyNodes.remove(rmNode.getNodeID());
    outbox.removedNodes.add(rmNode.getNodeID());
    queueFacade.updateAvailableResourcesMetrics();
  }

  @Override
  protected synchronized void nodeUpdate(RMNode rmNode) {
    ledger.nodeUpdatesHandled.incrementAndGet();
    FiCaSchedulerNode before = nodeTracker.getNode(rmNode.getNodeID());
    Resource allocatedBefore = before == null ? null : Resources.clone(before.getAllocatedResource());
    super.nodeUpdate(rmNode);
    FiCaSchedulerNode node = nodeTracker.getNode(rmNode.getNodeID());
    if (node == null) {
      return;
    }
    if (allocatedBefore != null && !allocatedBefore.equals(node.getAllocatedResource())) {
      // A container the RM completed earlier (a preemption: SchedulerNode keeps a launched container's
      // resources until its NodeManager reports it gone) was released only now: the service must see it.
      outbox.dirtyNodes.add(node.getNodeID());
    }
    long now = System.currentTimeMillis();
    try {
      placement.assign(node, now);
    } catch (RuntimeException e) {
      // The RM's event dispatcher exits the JVM on an uncaught exception: a shim bug must cost
      // this heartbeat's placements, never the ResourceManager.
      LOG.error("DollyMP: placement on {} failed; skipping this heartbeat's placements", node.getNodeID(), e);
    }
    queueFacade.updateHeadroomAndMetrics();
  }

  /** A plan reached the plan book (the client's gRPC thread): under "plan" its proposals are committed now. */
  private void planArrived() {
    if (shimConfig().commit() == ShimConfig.Commit.PLAN) {
      arrivalCommits.planArrived();
    }
  }

  /** {@link PlanArrivalCommits}' pass: every waiting proposal, under the lock a heartbeat takes. */
  private synchronized void commitWaiting() {
    // A failure is PlanArrivalCommits' to log: it costs that pass, and the heartbeats commit what is left.
    if (placement.commitWaiting(System.currentTimeMillis()) > 0) {
      queueFacade.updateHeadroomAndMetrics();
    }
  }

  /**
   * A live container reported by a NodeManager re-registering with this ResourceManager (work-preserving
   * restart or failover), called back by the queue while AbstractYarnScheduler recovers it onto its node and
   * attempt: accounted like a committed one (used resources, the AM share) and sent to the service in the
   * next batch (a full resync sends it anyway, from the attempt's live containers).
   */
  private synchronized void containerRecovered(RMContainer rmContainer) {
    ledger.recovered(rmContainer, AppLifecycle.isMasterContainer(rmContext, rmContainer.getContainerId()));
  }

  @Override
  protected synchronized void completedContainerInternal(RMContainer rmContainer, ContainerStatus status,
      RMContainerEventType event) {
    ContainerId id = rmContainer.getContainerId();
    ShimAppAttempt attempt = getCurrentAttemptForContainer(id);
    FiCaSchedulerNode node = nodeTracker.getNode(rmContainer.getContainer().getNodeId());
    ledger.finished(id, status, event);
    if (attempt == null) {
      LOG.info("DollyMP: container {} of unknown application completed ({})", id, event);
      return;
    }
    attempt.containerCompleted(rmContainer, status, event, CommonNodeLabelsManager.NO_LABEL);
    ledger.released(node, rmContainer, attempt.getApplicationAttemptId());
  }

  // ------------------------------------------------------------------------------------------
  // AM allocate (AM RPC threads)
  // ------------------------------------------------------------------------------------------

  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release, List<String> blacklistAdditions,
      List<String> blacklistRemovals, ContainerUpdates updateRequests) {
    ShimAppAttempt attempt = getApplicationAttempt(attemptId);
    if (attempt == null || !attempt.getApplicationAttemptId().equals(attemptId)) {
      LOG.error("DollyMP: allocate from unknown or stale attempt {}", attemptId);
      return EMPTY_ALLOCATION;
    }
    UnsupportedRequests.refuse(ask, schedulingRequests, updateRequests);
    normalizeResourceRequests(ask);
    releaseContainers(release, attempt);
    synchronized (attempt) {
      if (attempt.isStopped()) {
        return EMPTY_ALLOCATION;
      }
      // The AM's blacklist (or, while its container is pending, the RM's AM blacklist): kept by YARN's
      // AppSchedulingInfo; the committer and the fallback check it, and the asks carry it to the service
      // (updated before the asks, so that new asks reach the service with it).
      boolean blacklistChanged = attempt.updateBlacklistChanged(blacklistAdditions, blacklistRemovals);
      if (!ask.isEmpty()) {
        attempt.updateResourceRequests(ask);
      }
      if (blacklistChanged || !ask.isEmpty()) {
        outbox.dirtyAsks.add(attemptId);
      }
      Resource headroom = attempt.getHeadroom();
      attempt.setApplicationHeadroomForMetrics(headroom);
      return new Allocation(attempt.pullNewlyAllocatedContainers(), headroom, null, null, null,
          attempt.pullUpdatedNMTokens());
    }
  }

  // ------------------------------------------------------------------------------------------
  // Read access for the batch builder, committer and fallback (package-private)
  // ------------------------------------------------------------------------------------------

  /** The scheduler's view of every node (allocated and total resources, running containers). */
  public synchronized List<FiCaSchedulerNode> nodes() {
    return nodeTracker.getAllNodes();
  }

  synchronized List<SchedulerApplication<ShimAppAttempt>> applicationsInOrder() {
    return new ArrayList<>(applications.values());
  }

  FiCaSchedulerNode shimNode(org.apache.hadoop.yarn.api.records.NodeId id) {
    return nodeTracker.getNode(id);
  }

  /** The node a plan names by its id ("host:port"); null when the RM does not know it or the id is malformed. */
  FiCaSchedulerNode nodeNamed(String nodeId) {
    try {
      return nodeTracker.getNode(org.apache.hadoop.yarn.api.records.NodeId.fromString(nodeId));
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  SchedulerApplication<ShimAppAttempt> application(ApplicationId appId) {
    return applications.get(appId);
  }

  /** Runs {@code body} under the scheduler's lock: a consistent view for a full resync. */
  synchronized <T> T locked(java.util.function.Supplier<T> body) {
    return body.get();
  }

  RMContext context() {
    return rmContext;
  }

}
