package io.dollymp.yarn.scheduler;

import io.dollymp.proto.v1.ContainerCompletion;
import io.dollymp.proto.v1.ContainerExitKind;
import io.dollymp.yarn.scheduler.client.ChannelSecurity;
import io.dollymp.yarn.scheduler.client.DecisionClient;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.scheduler.client.SessionStateMachine;
import io.dollymp.yarn.scheduler.queue.PreemptionKeys;
import io.dollymp.yarn.scheduler.queue.QueueConfigReader;
import io.dollymp.yarn.scheduler.queue.QueueLoader;
import io.dollymp.yarn.scheduler.queue.QueueTree;
import io.dollymp.yarn.scheduler.queue.ShimQueue;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.Set;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.nodelabels.CommonNodeLabelsManager;
import org.apache.hadoop.yarn.proto.YarnServiceProtos.SchedulerResourceTypes;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.RMStateStore.RMState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
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
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
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
public class DollyMPScheduler extends AbstractYarnScheduler<ShimAppAttempt, FiCaSchedulerNode>
    implements Configurable {
  static final Logger LOG = LoggerFactory.getLogger(DollyMPScheduler.class);
  static final String VERSION = "0.1.0";

  /** Who placed a container: the decision service or the shim's built-in fallback. */
  public enum Source { SERVICE, FALLBACK }

  private final ResourceCalculator calculator = new DominantResourceCalculator();
  private final Resource usedResource = Resource.newInstance(0, 0);
  private final Outbox outbox = new Outbox();
  private final PlanBook planBook = new PlanBook();
  private final Map<ContainerId, Source> containerSources = new ConcurrentHashMap<>();
  private final Map<ContainerId, String> placementOfContainer = new ConcurrentHashMap<>();
  private final AtomicLong nodeUpdatesHandled = new AtomicLong();
  private final AtomicLong fallbackContainers = new AtomicLong();
  private final AtomicLong blacklistSkips = new AtomicLong();
  private final AtomicLong containersRecovered = new AtomicLong();
  private final LatencyRecorder heartbeatLatency = new LatencyRecorder();
  private final Resource amUsed = Resource.newInstance(0, 0);
  private final Set<ContainerId> amContainers = ConcurrentHashMap.newKeySet();
  private ShimMetrics shimMetrics;
  private volatile long lastFallbackCommitMs = -1;
  private volatile long lastFallbackHeartbeatMs = -1;
  private Configuration conf;
  private volatile ShimConfig shimConfig;
  private Configuration startConf;
  private QueueTree queues;
  private QueueMoves moves;
  private SessionStateMachine session;
  private volatile DecisionClient client;
  private PlanCommitter committer;
  private FallbackAllocator fallback;
  private boolean usePortForNodeName;
  private AppDiagnostics diagnostics;
  private BatchBuilder view;

  public DollyMPScheduler() {
    super(DollyMPScheduler.class.getName());
  }

  // ------------------------------------------------------------------------------------------
  // Lifecycle
  // ------------------------------------------------------------------------------------------

  @Override
  public void serviceInit(Configuration configuration) throws Exception {
    this.startConf = new Configuration(configuration);
    Configuration layered = QueueLoader.layered(startConf, null, rmContext == null ? null
        : rmContext.getConfigurationProvider());
    this.shimConfig = ShimConfig.from(layered); // fails start-up naming the invalid key
    installWebHooks(configuration);
    this.applications = new ConcurrentSkipListMap<>();
    this.minimumAllocation = super.getMinimumAllocation();
    initMaximumResourceCapability(super.getMaximumAllocation());
    this.usePortForNodeName = configuration.getBoolean(
        org.apache.hadoop.yarn.conf.YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME,
        org.apache.hadoop.yarn.conf.YarnConfiguration.DEFAULT_RM_SCHEDULER_USE_PORT_FOR_NODE_NAME);
    this.queues = new QueueTree(configuration, this::getClusterResource, this::containerRecovered);
    queues.setAcls(layered);
    queues.apply(QueueConfigReader.read(layered), Collections.<String, Integer>emptyMap()); // fails naming the key
    this.moves = new QueueMoves(this, queues, outbox);
    this.session = new SessionStateMachine(System::currentTimeMillis);
    this.diagnostics = new AppDiagnostics(shimConfig.uiAddress(), this::writeDiagnostics);
    BatchBuilder view = new BatchBuilder(this, outbox, planBook, diagnostics);
    this.committer = new PlanCommitter(this, outbox, planBook);
    this.fallback = new FallbackAllocator(this);
    this.view = view;
    this.client = newClient(shimConfig);
    this.shimMetrics = new ShimMetrics(session, planBook, heartbeatLatency, nodeUpdatesHandled::get,
        fallbackContainers::get, blacklistSkips::get);
    super.serviceInit(configuration);
    // CapacityScheduler's preemption policy would refuse this scheduler and stop the RM: the service does its
    // work (PreemptionKeys); any other monitor policy runs as configured.
    schedulingMonitorManager.initialize(rmContext, PreemptionKeys.forMonitors(configuration));
  }

  /**
   * Hadoop's RM web UI and REST API know only its own schedulers: without a scheduler page the UI's
   * scheduler page fails, and /ws/v1/cluster/scheduler answers "Unknown scheduler". Unless the
   * operator configured them, point Hadoop's plug-in keys at the shim's page, DAO and web services.
   */
  static void installWebHooks(Configuration conf) {
    setIfUnset(conf, "yarn.http.rmwebapp.scheduler.page.class",
        "io.dollymp.yarn.scheduler.web.DollyMPSchedulerPage");
    setIfUnset(conf, "yarn.webapp.custom.webservice.class", "io.dollymp.yarn.scheduler.web.DollyMPWebServices");
    setIfUnset(conf, "yarn.http.rmwebapp.custom.dao.classes", "io.dollymp.yarn.scheduler.web.DollyMPSchedulerInfo");
  }

  private static void setIfUnset(Configuration conf, String key, String value) {
    if (conf.get(key) == null) {
      conf.set(key, value);
      LOG.info("DollyMP: {} = {}", key, value);
    }
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
      next = QueueRefresh.refresh(startConf, configuration, context, queues, applicationsByQueue());
      super.reinitialize(PreemptionKeys.forMonitors(configuration), context);
      outbox.queuesChanged = true;
    }
    if (!next.sameConnection(shimConfig) && client != null && isInState(STATE.STARTED)) {
      client = QueueRefresh.restartClient(client, next, session, view, this::newClient);
    }
    shimConfig = next;
  }

  /** How many applications each leaf queue holds (by path). */
  synchronized Map<String, Integer> applicationsByQueue() {
    Map<String, Integer> out = new java.util.HashMap<>();
    for (SchedulerApplication<ShimAppAttempt> app : applications.values()) {
      out.merge(((ShimQueue) app.getQueue()).getQueuePath(), 1, Integer::sum);
    }
    return out;
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
        addApplication(e.getApplicationId(), e.getQueue(), e.getUser(), e.getIsAppRecovering(), e.isUnmanagedAM());
        break;
      }
      case APP_REMOVED: {
        AppRemovedSchedulerEvent e = (AppRemovedSchedulerEvent) event;
        doneApplication(e.getApplicationID());
        break;
      }
      case APP_ATTEMPT_ADDED: {
        AppAttemptAddedSchedulerEvent e = (AppAttemptAddedSchedulerEvent) event;
        addApplicationAttempt(e.getApplicationAttemptId(), e.getTransferStateFromPreviousAttempt(),
            e.getIsAttemptRecovering());
        break;
      }
      case APP_ATTEMPT_REMOVED: {
        AppAttemptRemovedSchedulerEvent e = (AppAttemptRemovedSchedulerEvent) event;
        doneApplicationAttempt(e.getApplicationAttemptID(), e.getKeepContainersAcrossAppAttempts());
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
    updateHeadroomAndMetrics();
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
    updateAvailableResourcesMetrics();
  }

  private synchronized void addApplication(ApplicationId appId, String queueName, String user, boolean recovering,
      boolean unmanagedAM) {
    String placed = queues.place(user, queueName);
    if (queues.queue(placed) == null && acceptsQueue(placed)) {
      placed = "default";
    }
    ShimQueue leaf = queues.queue(placed);
    String rejection = queues.rejection(appId, user, placed);
    if (recovering && (leaf == null || !leaf.isLeaf())) {
      // Recovered from the state store into a queue that is gone: killed with the reason, as CapacityScheduler
      // does with yarn.resourcemanager.fail-fast (a recovered application cannot be rejected any more).
      String why = "Queue " + placed + " of application " + appId + " is missing during recovery";
      LOG.error("DollyMP: {}", why);
      rmContext.getDispatcher().getEventHandler().handle(new RMAppEvent(appId, RMAppEventType.KILL, why));
      return;
    }
    if (rejection != null && !recovering) {
      // As CapacityScheduler does: the application fails at once with the reason, instead of running elsewhere.
      LOG.info("DollyMP: {}", rejection);
      rmContext.getDispatcher().getEventHandler().handle(new RMAppEvent(appId, RMAppEventType.APP_REJECTED, rejection));
      return;
    }
    if (!placed.equals(queueName) && rmContext.getRMApps().get(appId) != null) {
      rmContext.getRMApps().get(appId).setQueue(leaf.getQueuePath()); // placed by a queue mapping
    }
    applications.put(appId, new SchedulerApplication<>(leaf, user, unmanagedAM));
    leaf.getMetrics().submitApp(user, unmanagedAM);
    outbox.dirtyApps.add(appId);
    LOG.info("DollyMP {} application {} from user {} into queue {}", recovering ? "recovered" : "accepted", appId,
        user, leaf.getQueuePath());
    if (!recovering) {
      rmContext.getDispatcher().getEventHandler().handle(new RMAppEvent(appId, RMAppEventType.APP_ACCEPTED));
    }
  }

  private synchronized void addApplicationAttempt(ApplicationAttemptId attemptId, boolean transferState,
      boolean recovering) {
    SchedulerApplication<ShimAppAttempt> app = applications.get(attemptId.getApplicationId());
    if (app == null) {
      LOG.warn("DollyMP: attempt {} of unknown application", attemptId);
      return;
    }
    org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue queue = app.getQueue();
    ShimAppAttempt attempt = new ShimAppAttempt(attemptId, app.getUser(), queue,
        queue.getAbstractUsersManager(), rmContext);
    if (transferState) {
      attempt.transferStateFromPreviousAttempt(app.getCurrentAppAttempt());
    }
    app.setCurrentAppAttempt(attempt);
    queue.getMetrics().submitAppAttempt(app.getUser(), app.isUnmanagedAM());
    outbox.dirtyApps.add(attemptId.getApplicationId());
    outbox.dirtyAsks.add(attemptId);
    if (!recovering) {
      rmContext.getDispatcher().getEventHandler()
          .handle(new RMAppAttemptEvent(attemptId, RMAppAttemptEventType.ATTEMPT_ADDED));
    }
  }

  private synchronized void doneApplication(ApplicationId appId) {
    SchedulerApplication<ShimAppAttempt> app = applications.remove(appId);
    if (app == null) {
      return;
    }
    app.getQueue().getAbstractUsersManager().deactivateApplication(app.getUser(), appId);
    app.stop(org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState.FINISHED);
    outbox.dirtyApps.remove(appId);
    outbox.removedApps.add(appId);
  }

  private synchronized void doneApplicationAttempt(ApplicationAttemptId attemptId, boolean keepContainers) {
    ShimAppAttempt attempt = getApplicationAttempt(attemptId);
    if (attempt == null) {
      LOG.warn("DollyMP: unknown attempt {} completed", attemptId);
      return;
    }
    for (RMContainer c : attempt.getLiveContainers()) {
      if (keepContainers && c.getState() == org.apache.hadoop.yarn.server.resourcemanager.rmcontainer
          .RMContainerState.RUNNING) {
        continue;
      }
      super.completedContainer(c,
          SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(), SchedulerUtils.COMPLETED_APPLICATION),
          RMContainerEventType.KILL);
    }
    attempt.stop(org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState.FINISHED);
    outbox.dirtyAsks.add(attemptId);
    diagnostics.forget(attemptId.toString());
  }

  /** The attempt's diagnostics (AppDiagnostics): shown by `yarn application -status` and the RM UI. */
  private void writeDiagnostics(String attemptId, String text) {
    try {
      ApplicationAttemptId id = ApplicationAttemptId.fromString(attemptId);
      org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp app = rmContext.getRMApps().get(id.getApplicationId());
      org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt attempt =
          app == null ? null : app.getRMAppAttempt(id);
      if (attempt != null) {
        attempt.updateAMLaunchDiagnostics(text);
      }
    } catch (IllegalArgumentException e) {
      LOG.debug("DollyMP: no diagnostics for malformed attempt id {}", attemptId);
    }
  }

  /** The decision service's HTTP address ("" when yarn.scheduler.dollymp.ui.address is not set). */
  public String uiAddress() {
    return shimConfig.uiAddress();
  }

  /** The service's page for one application ("" when no ui.address is configured). */
  public String pageUrl(String applicationId) {
    return AppDiagnostics.pageUrl(shimConfig.uiAddress(), applicationId);
  }

  /** The latest diagnostics written for an attempt (null if none). */
  public String latestDiagnostics(ApplicationAttemptId attemptId) {
    return diagnostics.latest(attemptId.toString());
  }

  @Override
  protected synchronized void nodeUpdate(RMNode rmNode) {
    nodeUpdatesHandled.incrementAndGet();
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
      assignOnHeartbeat(node, now);
    } catch (RuntimeException e) {
      // The RM's event dispatcher exits the JVM on an uncaught exception: a shim bug must cost
      // this heartbeat's placements, never the ResourceManager.
      LOG.error("DollyMP: placement on {} failed; skipping this heartbeat's placements", node.getNodeID(), e);
    }
    updateHeadroomAndMetrics();
  }

  private void assignOnHeartbeat(FiCaSchedulerNode node, long now) {
    committer.expire(now, shimConfig.planMaxAgeMs());
    if (rmContext.isWorkPreservingRecoveryEnabled() && !rmContext.isSchedulerReadyForAllocatingContainers()) {
      // After an RM restart or failover, nothing new is placed until the NodeManagers had
      // yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms to re-register with their
      // containers (as CapacityScheduler waits): until then the cluster looks emptier than it is.
      committer.dropAllFor(node);
      return;
    }
    if (session.acceptsPlans()) {
      committer.commitKills();
      committer.commitFor(node, now, shimConfig.planMaxAgeMs());
    } else {
      committer.dropAllFor(node);
      if (shimConfig.fallbackPolicy() == ShimConfig.FallbackPolicy.FIFO
          && session.fallbackDue(shimConfig.fallbackAfterMs())) {
        lastFallbackHeartbeatMs = now;
        int placed = fallback.assign(node);
        if (placed > 0) {
          lastFallbackCommitMs = now;
          fallbackContainers.addAndGet(placed);
          outbox.fallbackSinceLastBatch = true;
        }
      }
    }
  }

  /**
   * Whether an application submitted to {@code queueName}, a queue the tree does not have, runs in the
   * "default" leaf instead of being refused as CapacityScheduler refuses it (the simulator's traces name
   * queues of their own).
   */
  protected boolean acceptsQueue(String queueName) {
    return false;
  }

  // ------------------------------------------------------------------------------------------
  // Allocation bookkeeping (used by PlanCommitter and FallbackAllocator on the event thread)
  // ------------------------------------------------------------------------------------------

  /** Records a container the shim just created on {@code node}; placementId is empty for fallback. */
  void containerCommitted(FiCaSchedulerNode node, RMContainer rmContainer, Source source, String placementId,
      boolean am) {
    node.allocateContainer(rmContainer);
    Resources.addTo(usedResource, rmContainer.getAllocatedResource());
    if (am) {
      amContainers.add(rmContainer.getContainerId());
      Resources.addTo(amUsed, rmContainer.getAllocatedResource());
    }
    containerSources.put(rmContainer.getContainerId(), source);
    placementOfContainer.put(rmContainer.getContainerId(), placementId);
    outbox.allocated.add(PlanCommitter.containerInfo(rmContainer, placementId, am));
    outbox.dirtyNodes.add(node.getNodeID());
    outbox.dirtyAsks.add(rmContainer.getApplicationAttemptId());
  }

  /**
   * The AM share cap: ApplicationMaster containers together may hold at most
   * {@code am-share.max} of the cluster's dominant resource, so that many small jobs cannot fill the
   * cluster with AMs whose tasks then never get room (deadlock). One AM is always allowed.
   */
  synchronized boolean amShareAllows(Resource capability) {
    if (amContainers.isEmpty()) {
      return true;
    }
    Resource cluster = getClusterResource();
    Resource after = Resources.add(amUsed, capability);
    return Resources.divide(calculator, cluster, after, cluster) <= shimConfig.amShareMax();
  }

  /** Resources held by ApplicationMaster containers. */
  public Resource amUsed() {
    return Resources.clone(amUsed);
  }

  /** Node heartbeat handling time on the RM event thread. */
  public LatencyRecorder heartbeatLatency() {
    return heartbeatLatency;
  }

  /** Wall-clock time of the latest container placed by the fallback policy (-1: none yet). */
  public long lastFallbackCommitMs() {
    return lastFallbackCommitMs;
  }

  /** Wall-clock time of the latest node heartbeat the fallback policy handled (-1: none yet). */
  public long lastFallbackHeartbeatMs() {
    return lastFallbackHeartbeatMs;
  }

  public long fallbackContainers() {
    return fallbackContainers.get();
  }

  /** Times the fallback policy kept an application off a node it blacklisted. */
  public long blacklistSkips() {
    return blacklistSkips.get();
  }

  void blacklistSkipped() {
    blacklistSkips.incrementAndGet();
  }

  /**
   * A live container reported by a NodeManager re-registering with this ResourceManager (work-preserving
   * restart or failover), called back by the queue while AbstractYarnScheduler recovers it onto its node and
   * attempt: accounted like a committed one (used resources, the AM share) and sent to the service in the
   * next batch (a full resync sends it anyway, from the attempt's live containers).
   */
  private synchronized void containerRecovered(RMContainer rmContainer) {
    ContainerId id = rmContainer.getContainerId();
    Resources.addTo(usedResource, rmContainer.getAllocatedResource());
    if (isMasterContainer(id) && amContainers.add(id)) {
      Resources.addTo(amUsed, rmContainer.getAllocatedResource());
    }
    containersRecovered.incrementAndGet();
    outbox.allocated.add(PlanCommitter.containerInfo(rmContainer, "", amContainers.contains(id)));
    outbox.dirtyAsks.add(rmContainer.getApplicationAttemptId());
  }

  /** Whether {@code id} runs its application's current ApplicationMaster (known from the state store). */
  private boolean isMasterContainer(ContainerId id) {
    org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp app =
        rmContext.getRMApps().get(id.getApplicationAttemptId().getApplicationId());
    org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt attempt =
        app == null ? null : app.getCurrentAppAttempt();
    org.apache.hadoop.yarn.api.records.Container master = attempt == null ? null : attempt.getMasterContainer();
    return master != null && master.getId().equals(id);
  }

  /** Live containers this ResourceManager took over from re-registering NodeManagers (work-preserving recovery). */
  public long containersRecovered() {
    return containersRecovered.get();
  }

  private void updateHeadroomAndMetrics() {
    Map<ShimQueue, Resource> headroom = updateAvailableResourcesMetrics();
    for (SchedulerApplication<ShimAppAttempt> app : applications.values()) {
      ShimAppAttempt attempt = app.getCurrentAppAttempt();
      Resource room = headroom.get(app.getQueue());
      if (attempt != null && room != null) {
        attempt.setHeadroom(room);
      }
    }
  }

  /** Each queue's headroom: the cluster's free resources, within what its maximum capacity leaves. */
  private Map<ShimQueue, Resource> updateAvailableResourcesMetrics() {
    Resource cluster = getClusterResource();
    Resource free = Resources.componentwiseMax(Resources.none(), Resources.subtract(cluster, usedResource));
    Map<ShimQueue, Resource> out = new java.util.HashMap<>();
    for (ShimQueue q : queues.all()) {
      Resource room = Resources.componentwiseMax(Resources.none(),
          Resources.subtract(Resources.multiply(cluster, q.absoluteMaximumCapacity()), q.used()));
      room = Resources.componentwiseMin(free, room);
      q.getMetrics().setAvailableResourcesToQueue(room);
      out.put(q, room);
    }
    return out;
  }

  @Override
  protected synchronized void completedContainerInternal(RMContainer rmContainer, ContainerStatus status,
      RMContainerEventType event) {
    ContainerId id = rmContainer.getContainerId();
    ShimAppAttempt attempt = getCurrentAttemptForContainer(id);
    FiCaSchedulerNode node = nodeTracker.getNode(rmContainer.getContainer().getNodeId());
    outbox.completed.add(ContainerCompletion.newBuilder()
        .setContainerId(id.toString())
        .setExitKind(exitKind(status, event))
        .setExitStatus(status.getExitStatus())
        .setFinishTimeMs(System.currentTimeMillis())
        .build());
    if (attempt == null) {
      LOG.info("DollyMP: container {} of unknown application completed ({})", id, event);
      return;
    }
    attempt.containerCompleted(rmContainer, status, event, CommonNodeLabelsManager.NO_LABEL);
    if (node != null) {
      node.releaseContainer(id, false);
      outbox.dirtyNodes.add(node.getNodeID());
    }
    Resources.subtractFrom(usedResource, rmContainer.getContainer().getResource());
    if (amContainers.remove(id)) {
      Resources.subtractFrom(amUsed, rmContainer.getContainer().getResource());
    }
    placementOfContainer.remove(id);
    outbox.dirtyAsks.add(attempt.getApplicationAttemptId());
  }

  static ContainerExitKind exitKind(ContainerStatus status, RMContainerEventType event) {
    if (event == RMContainerEventType.RELEASED) {
      return ContainerExitKind.CONTAINER_EXIT_RELEASED;
    }
    if (event == RMContainerEventType.EXPIRE) {
      return ContainerExitKind.CONTAINER_EXIT_EXPIRED;
    }
    int code = status.getExitStatus();
    if (SchedulerUtils.LOST_CONTAINER.equals(status.getDiagnostics())) {
      return ContainerExitKind.CONTAINER_EXIT_LOST;
    }
    if (code == ContainerExitStatus.SUCCESS) {
      return ContainerExitKind.CONTAINER_EXIT_SUCCESS;
    }
    if (code == ContainerExitStatus.PREEMPTED) {
      return ContainerExitKind.CONTAINER_EXIT_PREEMPTED;
    }
    if (code == ContainerExitStatus.KILLED_BY_APPMASTER || code == ContainerExitStatus.KILLED_BY_RESOURCEMANAGER
        || code == ContainerExitStatus.ABORTED || event == RMContainerEventType.KILL) {
      return ContainerExitKind.CONTAINER_EXIT_KILLED;
    }
    return ContainerExitKind.CONTAINER_EXIT_FAILED;
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

  SchedulerApplication<ShimAppAttempt> application(ApplicationId appId) {
    return applications.get(appId);
  }

  /** Whether the shim committed or recovered {@code id} as an ApplicationMaster's container. */
  boolean isAmContainer(ContainerId id) {
    return amContainers.contains(id);
  }

  /** The service placement a live container came from ("" for fallback or recovered containers). */
  String placementOf(ContainerId id) {
    return placementOfContainer.getOrDefault(id, "");
  }

  /** Runs {@code body} under the scheduler's lock: a consistent view for a full resync. */
  synchronized <T> T locked(java.util.function.Supplier<T> body) {
    return body.get();
  }

  RMContext context() {
    return rmContext;
  }

  ResourceCalculator calculator() {
    return calculator;
  }

  // ------------------------------------------------------------------------------------------
  // Observability for operators and tests
  // ------------------------------------------------------------------------------------------

  public SessionState sessionState() {
    return session.state();
  }

  /** Who placed each container this RM allocated (decision service or fallback). */
  public Map<ContainerId, Source> containerSources() {
    return Collections.unmodifiableMap(new HashMap<>(containerSources));
  }

  public long proposalsCommitted() {
    return planBook.committed.get();
  }

  /** Containers preempted at the service's request (Plan.kill_container_ids). */
  public long containersPreempted() {
    return planBook.killsCommitted.get();
  }

  public long proposalsDropped() {
    return planBook.dropped.values().stream().mapToLong(AtomicLong::get).sum();
  }

  /** Containers of service placements dropped for {@code kind}. */
  public long proposalsDropped(io.dollymp.proto.v1.PlacementOutcomeKind kind) {
    AtomicLong n = planBook.dropped.get(kind);
    return n == null ? 0 : n.get();
  }

  /** Node heartbeats handled on the scheduler event thread so far. */
  public long nodeUpdatesHandled() {
    return nodeUpdatesHandled.get();
  }

  public long fallbackMs() {
    return session.fallbackMs();
  }

  public long plansReceived() {
    return client.plansReceived();
  }

  // ------------------------------------------------------------------------------------------
  // The rest of YarnScheduler: queues, ACLs, recovery
  // ------------------------------------------------------------------------------------------

  /**
   * The submitted application priority, capped at yarn.cluster.max-application-priority as CapacityScheduler
   * does (AbstractYarnScheduler's default turns every priority into 0). It reaches the service in ApplicationInfo.
   */
  @Override
  public Priority checkAndGetApplicationPriority(Priority requested, UserGroupInformation user, String queuePath,
      ApplicationId applicationId) {
    int max = getMaxClusterLevelAppPriority().getPriority();
    return Priority.newInstance(requested == null ? 0 : Math.min(requested.getPriority(), max));
  }

  @Override
  public QueueInfo getQueueInfo(String queueName, boolean includeChildQueues, boolean recursive) throws IOException {
    return queues.getQueueInfo(queueName, includeChildQueues, recursive);
  }

  /** The shim's settings in force (re-read by {@code -refreshQueues}). */
  public ShimConfig shimConfig() {
    return shimConfig;
  }

  /** The queue tree (read by the web pages and tests). */
  public QueueTree queues() {
    return queues;
  }

  @Override
  public void preValidateMoveApplication(ApplicationId appId, String targetQueue) throws YarnException {
    moves.validate(appId, targetQueue);
  }

  @Override
  public String moveApplication(ApplicationId appId, String targetQueue) throws YarnException {
    return moves.move(appId, targetQueue);
  }

  /**
   * The resource types the shim schedules on (memory and vcores), as CapacityScheduler reports them with the
   * dominant resource calculator. The RM hands them to every AM at registration; MapReduce's AM then judges
   * headroom, reduce ramp-up and reduce preemption by vcores too (with memory only it ramps reduces up into
   * room that has no vcores left, and preempts them again).
   */
  @Override
  public EnumSet<SchedulerResourceTypes> getSchedulingResourceTypes() {
    return EnumSet.of(SchedulerResourceTypes.MEMORY, SchedulerResourceTypes.CPU);
  }

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo() {
    try {
      return queues.userAclInfo(UserGroupInformation.getCurrentUser());
    } catch (IOException e) {
      LOG.warn("DollyMP: no current user for queue ACL info: {}", e.toString());
      return new ArrayList<>();
    }
  }

  @Override
  public ResourceCalculator getResourceCalculator() {
    return calculator;
  }

  @Override
  public int getNumClusterNodes() {
    return nodeTracker.nodeCount();
  }

  @Override
  public QueueMetrics getRootQueueMetrics() {
    return queues.root().getMetrics();
  }

  @Override
  public boolean checkAccess(UserGroupInformation callerUGI, QueueACL acl, String queueName) {
    return queues.checkAccess(callerUGI, acl, queueName);
  }

  @Override
  public synchronized List<ApplicationAttemptId> getAppsInQueue(String queueName) {
    ShimQueue q = queues.queue(queueName);
    if (q == null) {
      return null; // CapacityScheduler's answer for a queue that does not exist
    }
    String path = q.getQueuePath();
    List<ApplicationAttemptId> out = new ArrayList<>();
    for (SchedulerApplication<ShimAppAttempt> app : applications.values()) {
      String appQueue = ((ShimQueue) app.getQueue()).getQueuePath();
      boolean inside = appQueue.equals(path) || appQueue.startsWith(path + ".");
      if (inside && app.getCurrentAppAttempt() != null) {
        out.add(app.getCurrentAppAttempt().getApplicationAttemptId());
      }
    }
    return out;
  }

  /**
   * Nothing to read here, as in CapacityScheduler: work-preserving recovery reaches the shim as events. The
   * RMAppManager re-adds each unfinished application and attempt from the state store (APP_ADDED and
   * APP_ATTEMPT_ADDED with the recovering flag, synchronously, before the scheduler starts), and each
   * NodeManager re-registers with its live containers (NODE_ADDED, {@link #addNodeAndRecover}). The new
   * instance's client registers a new session with the decision service and sends a full resync.
   */
  @Override
  public void recover(RMState state) {
    LOG.info("DollyMP: recovering; applications and containers follow from the state store and the NodeManagers");
  }

  @Override
  public RMContainer getRMContainer(ContainerId containerId) {
    ShimAppAttempt attempt = getCurrentAttemptForContainer(containerId);
    return attempt == null ? null : attempt.getRMContainer(containerId);
  }

  /**
   * Preempts a container the service named in a plan's kill list (RM event thread): its AM sees exit
   * status PREEMPTED, which MapReduce treats as a killed attempt (not a failure). Returns null when
   * done, else why not: an ApplicationMaster's container is never killed this way, nor one of another
   * application than {@code applicationId}, and a container that is unknown or already finished is left
   * alone.
   */
  synchronized String preemptForService(String containerId, String applicationId) {
    ContainerId id;
    try {
      id = ContainerId.fromString(containerId);
    } catch (IllegalArgumentException e) {
      return "kill_container_ids: not a container id: " + containerId;
    }
    RMContainer c = getRMContainer(id);
    if (c == null || c.getState() == RMContainerState.COMPLETED || c.getState() == RMContainerState.KILLED
        || c.getState() == RMContainerState.RELEASED || c.getState() == RMContainerState.EXPIRED) {
      return "no live container " + containerId;
    }
    if (c.isAMContainer() || amContainers.contains(id)) {
      return "container " + containerId + " runs an ApplicationMaster";
    }
    String owner = c.getApplicationAttemptId().getApplicationId().toString();
    if (!owner.equals(applicationId)) {
      return "kill_application_ids: container " + containerId + " belongs to " + owner + ", not '"
          + applicationId + "'";
    }
    completedContainer(c, SchedulerUtils.createPreemptedContainerStatus(id,
        "Preempted by DollyMP at the decision service's request (a clone yielding to a waiting task, or a queue "
            + "taking back its guarantee; the decision log has the reason)"), RMContainerEventType.KILL);
    return null;
  }

  @Override
  public void killContainer(RMContainer container) {
    completedContainer(container, SchedulerUtils.createKilledContainerStatus(container.getContainerId(),
        "Killed by the ResourceManager"), RMContainerEventType.KILL);
  }
}
