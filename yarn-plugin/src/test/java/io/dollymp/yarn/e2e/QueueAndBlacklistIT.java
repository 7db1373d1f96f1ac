package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.proto.v1.PlacementOutcomeKind;
import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.BlacklistBlindService;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import io.dollymp.yarn.testkit.MiniClusters;
import io.dollymp.yarn.testkit.UnmanagedAm;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueStatistics;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.proto.YarnServiceProtos.SchedulerResourceTypes;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Plain applications' harms (issue 30) through a real RM with the shim (4 NodeManagers) and the real
 * decision service: queue commands answer for the shim's queue and refuse unknown names as
 * CapacityScheduler does; an application's blacklist keeps its containers off the excluded nodes with
 * the service up, under the fallback policy, and against a service that ignores the blacklist.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class QueueAndBlacklistIT {
  private static final String NAME = "dollymp-queue-blacklist";
  private static final Path WORK = Paths.get("target", "queue-blacklist-it").toAbsolutePath();
  private static final Resource SMALL = Resource.newInstance(512, 1);
  private static int grpcPort;
  private static DecisionServiceProcess service;
  private static MiniMRYarnCluster cluster;
  private static DollyMPScheduler shim;
  private static UnmanagedAm am;
  private static Set<String> excluded;
  private static Set<NodeId> excludedIds;

  @BeforeAll
  static void start() throws Exception {
    FileUtil.fullyDelete(WORK.toFile());
    try (ServerSocket s = new ServerSocket(0)) {
      grpcPort = s.getLocalPort();
    }
    service = new DecisionServiceProcess(WORK.resolve("service"), "dollymp", grpcPort);
    service.awaitGrpcPort(60_000);
    Configuration conf = MiniClusters.shimConf(grpcPort);
    // The mini cluster's NodeManagers share one host: node names must carry the port to be told apart.
    conf.setBoolean(YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME, true);
    cluster = MiniClusters.startWithShim(NAME, 4, conf, 30_000);
    shim = (DollyMPScheduler) cluster.getResourceManager().getResourceScheduler();
    assertEquals(SessionState.RUNNING, shim.sessionState(), "shim never reached RUNNING:\n" + service.logText());
    long until = System.currentTimeMillis() + 30_000;
    while (shim.nodes().size() < 4 && System.currentTimeMillis() < until) {
      Thread.sleep(100);
    }
    // The first two nodes in id order: the ones a first-fit placement would try first.
    List<? extends SchedulerNode> first = shim.nodes().stream()
        .sorted(java.util.Comparator.comparing(SchedulerNode::getNodeName)).limit(2).toList();
    excluded = first.stream().map(SchedulerNode::getNodeName).collect(Collectors.toCollection(java.util.TreeSet::new));
    excludedIds = first.stream().map(SchedulerNode::getNodeID).collect(Collectors.toSet());
  }

  @AfterAll
  static void stop() throws Exception {
    if (am != null) {
      am.close();
    }
    if (cluster != null) {
      MiniClusters.stop(cluster);
    }
    if (service != null) {
      service.close();
    }
  }

  private static Configuration clientConf() {
    return new Configuration(cluster.getConfig());
  }

  private static void assertOffBlacklist(List<Container> got, DollyMPScheduler.Source source) {
    Map<ContainerId, DollyMPScheduler.Source> sources = shim.containerSources();
    for (Container c : got) {
      assertTrue(!excludedIds.contains(c.getNodeId()), c.getId() + " is on blacklisted node " + c.getNodeId() + " "
          + excluded);
      assertEquals(source, sources.get(c.getId()), c.getId() + " placed by " + sources.get(c.getId()));
    }
  }

  @Test
  @Order(1)
  void blacklistedNodesGetNoContainerFromTheService() throws Exception {
    am = UnmanagedAm.start(clientConf(), "blacklisting-am", "root.default", 60_000);
    assertTrue(am.registration.getSchedulerResourceTypes().contains(SchedulerResourceTypes.CPU),
        "scheduling resource types told to the AM: " + am.registration.getSchedulerResourceTypes());
    am.blacklist(List.copyOf(excluded));
    am.request(8, SMALL);
    List<Container> got = am.await(8, 60_000);
    assertEquals(8, got.size(), "containers allocated with the service up: " + got);
    assertOffBlacklist(got, DollyMPScheduler.Source.SERVICE);
  }

  @Test
  @Order(2)
  void queueCommandsAnswerForTheShimsQueueWithItsApplicationsAndResources() throws Exception {
    YarnClient yc = am.yarnClient();
    for (String name : List.of("default", "root.default", "root")) {
      QueueInfo q = yc.getQueueInfo(name); // `yarn queue -status <name>`: includes the applications
      assertNotNull(q, name);
      assertTrue(q.getApplications().stream().anyMatch(r -> r.getApplicationId().equals(am.appId)),
          name + " lists " + q.getApplications());
      assertRunningWithResources(name, q.getQueueStatistics());
      assertTrue(inQueue(yc, name).stream().anyMatch(r -> r.getApplicationId().equals(am.appId)),
          "applications in queue " + name);
    }
    assertEquals("root", yc.getQueueInfo("root").getQueueName());
    List<QueueInfo> top = yc.getRootQueueInfos(); // what `yarn top` sums up
    assertEquals(List.of("default"), top.stream().map(QueueInfo::getQueueName).toList());
    assertRunningWithResources("yarn top", top.get(0).getQueueStatistics());

    // As under CapacityScheduler: the RM logs "Unknown queue: nosuchqueue" and answers no queue, which
    // `yarn queue -status` reports as "Cannot get queue from RM by queueName = nosuchqueue".
    assertNull(yc.getQueueInfo("nosuchqueue"));
    assertEquals(List.of(), inQueue(yc, "nosuchqueue"));

    for (String queue : List.of("nosuchqueue", "root")) {
      ApplicationSubmissionContext ctx = yc.createApplication().getApplicationSubmissionContext();
      ApplicationId id = ctx.getApplicationId();
      ctx.setQueue(queue);
      ctx.setUnmanagedAM(true);
      ctx.setResource(SMALL);
      ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, null, null, null, null));
      YarnException refused = assertThrows(YarnException.class, () -> yc.submitApplication(ctx));
      assertTrue(refused.getMessage().contains(queue), refused.getMessage());
      ApplicationReport report = yc.getApplicationReport(id);
      assertEquals(YarnApplicationState.FAILED, report.getYarnApplicationState());
      assertTrue(report.getDiagnostics().contains("queue: " + queue), report.getDiagnostics());
    }
    am.releaseAll();
  }

  /** `yarn application -list -queue <name>`: the RM asks the scheduler for the queue's applications. */
  private static List<ApplicationReport> inQueue(YarnClient yc, String queue) throws Exception {
    return yc.getApplications(Set.of(queue), Set.of(), Set.of(), EnumSet.noneOf(YarnApplicationState.class));
  }

  private static void assertRunningWithResources(String what, QueueStatistics s) {
    assertNotNull(s, what + ": no queue statistics");
    assertTrue(s.getNumAppsRunning() >= 1, what + ": running applications " + s.getNumAppsRunning());
    assertTrue(s.getAllocatedMemoryMB() >= 8 * 512, what + ": allocated MB " + s.getAllocatedMemoryMB());
    assertTrue(s.getAllocatedContainers() >= 8, what + ": allocated containers " + s.getAllocatedContainers());
  }

  @Test
  @Order(3)
  void theFallbackKeepsTheApplicationOffItsBlacklistedNodes() throws Exception {
    am.releaseAll();
    service.killHard();
    long until = System.currentTimeMillis() + 30_000;
    while (shim.sessionState() != SessionState.FALLBACK && System.currentTimeMillis() < until) {
      Thread.sleep(50);
    }
    long skipsBefore = shim.blacklistSkips();
    // Ask for two more containers than the allowed nodes can hold: the demand outlives the allowed nodes'
    // heartbeats, so the fallback must meet a blacklisted node with demand pending, whatever the order in
    // which the NodeManagers heartbeat (a smaller ask could be met before any blacklisted node heartbeats).
    int fit = allowedNodesFit(SMALL);
    am.request(fit + 2, SMALL);
    List<Container> got = am.await(fit, 60_000);
    assertEquals(fit, got.size(), "containers allocated by the fallback: " + got);
    assertOffBlacklist(got, DollyMPScheduler.Source.FALLBACK);
    long until2 = System.currentTimeMillis() + 15_000;
    while (shim.blacklistSkips() <= skipsBefore && System.currentTimeMillis() < until2) {
      Thread.sleep(100);
    }
    assertTrue(shim.blacklistSkips() > skipsBefore, "the fallback never met a blacklisted node");
    assertEquals(List.of(), am.await(1, 3_000), "the fallback placed beyond the allowed nodes");
    am.cancel(2, SMALL);
    am.releaseAll();
  }

  /** How many containers of {@code size} the nodes outside the blacklist can hold right now. */
  private static int allowedNodesFit(Resource size) {
    int fit = 0;
    for (SchedulerNode n : shim.nodes()) {
      if (!excludedIds.contains(n.getNodeID())) {
        Resource free = n.getUnallocatedResource();
        long byMemory = free.getMemorySize() / size.getMemorySize();
        fit += (int) Math.min(byMemory, free.getVirtualCores() / size.getVirtualCores());
      }
    }
    return fit;
  }

  @Test
  @Order(4)
  void theShimRefusesServicePlacementsOnBlacklistedNodes() throws Exception {
    try (BlacklistBlindService blind = new BlacklistBlindService(grpcPort)) {
      long until = System.currentTimeMillis() + 30_000;
      while (shim.sessionState() != SessionState.RUNNING && System.currentTimeMillis() < until) {
        Thread.sleep(50);
      }
      assertEquals(SessionState.RUNNING, shim.sessionState());
      long droppedBefore = shim.proposalsDropped(PlacementOutcomeKind.PLACEMENT_DROPPED_BLACKLISTED);
      am.request(4, SMALL);
      List<Container> got = am.await(4, 5_000);
      assertTrue(blind.proposed() >= 4, "the blind service proposed " + blind.proposed());
      for (Container c : got) {
        assertTrue(!excludedIds.contains(c.getNodeId()), c.getId() + " committed on blacklisted node " + c.getNodeId());
      }
      assertTrue(shim.proposalsDropped(PlacementOutcomeKind.PLACEMENT_DROPPED_BLACKLISTED) >= droppedBefore + 4,
          "refusals counted: " + shim.proposalsDropped(PlacementOutcomeKind.PLACEMENT_DROPPED_BLACKLISTED));
    }
  }
}
