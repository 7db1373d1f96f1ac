package io.dollymp.yarn.scheduler;

import io.dollymp.yarn.scheduler.client.DecisionClient;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.scheduler.client.SessionStateMachine;
import io.dollymp.yarn.scheduler.queue.QueueTree;
import java.io.IOException;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.proto.YarnServiceProtos.SchedulerResourceTypes;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.RMStateStore.RMState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;

/**
 * The shim's parts and what it answers without acting: the components {@link DollyMPScheduler} builds and
 * drives (outbox, plan book, container ledger, session, client, heartbeat placement, queues), the figures
 * operators and tests read of them, and the rest of YarnScheduler (queue information, ACLs, moves, recovery)
 * delegated to the queue facade. {@link DollyMPScheduler} holds the lifecycle, the RM's events, node
 * heartbeats and AM allocate calls.
 */
public abstract class ShimSchedulerBase extends AbstractYarnScheduler<ShimAppAttempt, FiCaSchedulerNode> {
  protected final ResourceCalculator calculator = new DominantResourceCalculator();
  protected final Outbox outbox = new Outbox();
  protected final PlanBook planBook = new PlanBook();
  protected final ContainerLedger ledger = new ContainerLedger(this, outbox, calculator, this::getClusterResource,
      () -> shimConfig().amShareMax());
  protected final LatencyRecorder heartbeatLatency = new LatencyRecorder();
  protected volatile ShimConfig shimConfig;
  protected QueueTree queues;
  protected QueueFacade queueFacade;
  protected SessionStateMachine session;
  protected volatile DecisionClient client;
  protected HeartbeatPlacement placement;
  protected AppDiagnostics diagnostics;

  protected ShimSchedulerBase(String name) {
    super(name);
  }

  /**
   * Whether an application submitted to {@code queueName}, a queue the tree does not have, runs in the
   * "default" leaf instead of being refused as CapacityScheduler refuses it (the simulator's traces name
   * queues of their own).
   */
  protected boolean acceptsQueue(String queueName) {
    return false;
  }

  ResourceCalculator calculator() {
    return calculator;
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

  /** Resources held by ApplicationMaster containers. */
  public Resource amUsed() {
    return ledger.amUsed();
  }

  /** Node heartbeat handling time on the RM event thread. */
  public LatencyRecorder heartbeatLatency() {
    return heartbeatLatency;
  }

  /** Wall-clock time of the latest container placed by the fallback policy (-1: none yet). */
  public long lastFallbackCommitMs() {
    return placement.lastFallbackCommitMs();
  }

  /** Wall-clock time of the latest node heartbeat the fallback policy handled (-1: none yet). */
  public long lastFallbackHeartbeatMs() {
    return placement.lastFallbackHeartbeatMs();
  }

  public long fallbackContainers() {
    return ledger.fallbackContainers.get();
  }

  /** Times the fallback policy kept an application off a node it blacklisted. */
  public long blacklistSkips() {
    return ledger.blacklistSkips.get();
  }

  /** Live containers this ResourceManager took over from re-registering NodeManagers (work-preserving recovery). */
  public long containersRecovered() {
    return ledger.containersRecovered.get();
  }

  // ------------------------------------------------------------------------------------------
  // Observability for operators and tests
  // ------------------------------------------------------------------------------------------

  public SessionState sessionState() {
    return session.state();
  }

  /** Who placed each container this RM allocated (decision service or fallback). */
  public Map<ContainerId, DollyMPScheduler.Source> containerSources() {
    return ledger.sources();
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
    return ledger.nodeUpdatesHandled.get();
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
    return queueFacade.queueInfo(queueName, includeChildQueues, recursive);
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
    queueFacade.validateMove(appId, targetQueue);
  }

  @Override
  public String moveApplication(ApplicationId appId, String targetQueue) throws YarnException {
    return queueFacade.move(appId, targetQueue);
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
    return queueFacade.userAclInfo();
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
    return queueFacade.rootMetrics();
  }

  @Override
  public boolean checkAccess(UserGroupInformation callerUGI, QueueACL acl, String queueName) {
    return queueFacade.checkAccess(callerUGI, acl, queueName);
  }

  @Override
  public synchronized List<ApplicationAttemptId> getAppsInQueue(String queueName) {
    return queueFacade.appsInQueue(queueName);
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
    DollyMPScheduler.LOG.info(
        "DollyMP: recovering; applications and containers follow from the state store and the NodeManagers");
  }

  @Override
  public RMContainer getRMContainer(ContainerId containerId) {
    ShimAppAttempt attempt = getCurrentAttemptForContainer(containerId);
    return attempt == null ? null : attempt.getRMContainer(containerId);
  }

  @Override
  public void killContainer(RMContainer container) {
    completedContainer(container, SchedulerUtils.createKilledContainerStatus(container.getContainerId(),
        "Killed by the ResourceManager"), RMContainerEventType.KILL);
  }
}
