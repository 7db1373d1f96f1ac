package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import io.dollymp.yarn.testkit.MiniClusters;
import io.dollymp.yarn.testkit.UnmanagedAm;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerUpdateType;
import org.apache.hadoop.yarn.api.records.ExecutionType;
import org.apache.hadoop.yarn.api.records.ExecutionTypeRequest;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.ResourceSizing;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.api.records.UpdateContainerRequest;
import org.apache.hadoop.yarn.api.resource.PlacementConstraints;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Issue 30, part 4, through a real RM with the shim (3 NodeManagers) and the real decision service:
 * requests the shim does not carry out are refused on the AM's allocate with the feature named;
 * application priority reaches the service; strict locality is honoured by the fallback policy.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NothingDroppedIT {
  private static final String NAME = "dollymp-nothing-dropped";
  private static final Path WORK = Paths.get("target", "nothing-dropped-it").toAbsolutePath();
  private static final Resource SMALL = Resource.newInstance(512, 1);
  private static DecisionServiceProcess service;
  private static MiniMRYarnCluster cluster;
  private static DollyMPScheduler shim;
  private static final List<UnmanagedAm> ams = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    FileUtil.fullyDelete(WORK.toFile());
    int grpcPort;
    try (ServerSocket s = new ServerSocket(0)) {
      grpcPort = s.getLocalPort();
    }
    service = new DecisionServiceProcess(WORK.resolve("service"), "dollymp", grpcPort);
    service.awaitGrpcPort(60_000);
    Configuration conf = MiniClusters.shimConf(grpcPort);
    conf.setBoolean(YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME, true);
    // SchedulingRequests go to the scheduler itself (the handler the shim must refuse them under).
    conf.set(YarnConfiguration.RM_PLACEMENT_CONSTRAINTS_HANDLER, YarnConfiguration.SCHEDULER_RM_PLACEMENT_CONSTRAINTS_HANDLER);
    conf.setInt(YarnConfiguration.MAX_CLUSTER_LEVEL_APPLICATION_PRIORITY, 10);
    cluster = MiniClusters.startWithShim(NAME, 3, conf, 30_000);
    shim = (DollyMPScheduler) cluster.getResourceManager().getResourceScheduler();
    assertEquals(SessionState.RUNNING, shim.sessionState(), "shim never reached RUNNING:\n" + service.logText());
    long until = System.currentTimeMillis() + 30_000;
    while (shim.nodes().size() < 3 && System.currentTimeMillis() < until) {
      Thread.sleep(100);
    }
  }

  @AfterAll
  static void stop() throws Exception {
    for (UnmanagedAm am : ams) {
      try {
        am.close();
      } catch (Exception e) {
        // an AM whose allocate was refused may already be gone
      }
    }
    if (cluster != null) {
      MiniClusters.stop(cluster);
    }
    if (service != null) {
      service.close();
    }
  }

  private static UnmanagedAm am(String name, int priority) throws Exception {
    UnmanagedAm am = UnmanagedAm.start(new Configuration(cluster.getConfig()), name, "default", priority, 60_000);
    ams.add(am);
    return am;
  }

  /** The RM keeps the priority the shim grants (AbstractYarnScheduler's default would make it 0). */
  @Test
  @Order(1)
  void applicationPriorityIsKeptAndCappedAsUnderCapacityScheduler() throws Exception {
    UnmanagedAm high = am("priority-12", 12);
    UnmanagedAm mid = am("priority-4", 4);
    // capped at yarn.cluster.max-application-priority, as CapacityScheduler caps it
    assertEquals(Priority.newInstance(10), high.yarnClient().getApplicationReport(high.appId).getPriority());
    assertEquals(Priority.newInstance(4), mid.yarnClient().getApplicationReport(mid.appId).getPriority());
  }

  @Test
  @Order(2)
  void schedulingRequestsAreRefusedOnAllocateNamingTheFeature() throws Exception {
    UnmanagedAm am = am("placement-constraints", 0);
    SchedulingRequest sr = SchedulingRequest.newBuilder().allocationRequestId(7).priority(Priority.newInstance(1))
        .allocationTags(Collections.singleton("web"))
        .executionType(ExecutionTypeRequest.newInstance(ExecutionType.GUARANTEED))
        .resourceSizing(ResourceSizing.newInstance(2, SMALL))
        .placementConstraintExpression(PlacementConstraints.build(PlacementConstraints.targetNotIn(
            PlacementConstraints.NODE, PlacementConstraints.PlacementTargets.allocationTag("web"))))
        .build();
    // The RM's own SchedulerPlacementProcessor refuses them for any scheduler but CapacityScheduler; the
    // shim refuses them too, should they reach its allocate (below, and the next test).
    Exception thrown = assertThrows(Exception.class, () -> am.sendSchedulingRequests(Collections.singletonList(sr)));
    Throwable cause = thrown;
    while (cause != null && !(cause instanceof YarnException)) {
      cause = cause.getCause();
    }
    assertTrue(cause != null && cause.getMessage().contains("cannot handle placement constraints"),
        "the AM's allocate was not refused naming placement constraints: " + thrown);
    ApplicationAttemptId attempt = am.yarnClient().getApplicationReport(am.appId).getCurrentApplicationAttemptId();
    YarnRuntimeException direct = assertThrows(YarnRuntimeException.class,
        () -> shim.allocate(attempt, new ArrayList<ResourceRequest>(), Collections.singletonList(sr),
            new ArrayList<>(), null, null, new ContainerUpdates()));
    assertTrue(direct.getMessage().contains("does not support SchedulingRequests / placement constraints"),
        direct.getMessage());
  }

  /**
   * Container updates: the RM validates them against the container's state before the scheduler sees them,
   * and the test AM never launches its containers; so the update is handed to the running shim's allocate
   * directly, as the RM's ApplicationMasterService would after validation.
   */
  @Test
  @Order(3)
  void containerUpdatesAreRefusedNamingTheFeature() throws Exception {
    UnmanagedAm am = am("resize", 0);
    am.request(1, SMALL);
    List<Container> got = am.await(1, 60_000);
    assertEquals(1, got.size());
    ApplicationAttemptId attempt = got.get(0).getId().getApplicationAttemptId();
    ContainerUpdates updates = new ContainerUpdates();
    updates.getIncreaseRequests().add(UpdateContainerRequest.newInstance(0, got.get(0).getId(),
        ContainerUpdateType.INCREASE_RESOURCE, Resource.newInstance(1024, 1), null));
    updates.getDemotionRequests().add(UpdateContainerRequest.newInstance(0, got.get(0).getId(),
        ContainerUpdateType.DEMOTE_EXECUTION_TYPE, null, ExecutionType.OPPORTUNISTIC));
    YarnRuntimeException refused = assertThrows(YarnRuntimeException.class,
        () -> shim.allocate(attempt, new ArrayList<ResourceRequest>(), new ArrayList<SchedulingRequest>(),
            new ArrayList<>(), null, null, updates));
    assertTrue(refused.getClass().getSimpleName().startsWith("SchedulerInvalidRes"), refused.getClass().getName());
    assertTrue(refused.getMessage().contains("container resource increase (1 UpdateContainerRequests)"),
        refused.getMessage());
    assertTrue(refused.getMessage().contains("container demotion to OPPORTUNISTIC"), refused.getMessage());
  }

  @Test
  @Order(4)
  void theFallbackHonoursStrictLocality() throws Exception {
    UnmanagedAm am = am("strict-locality", 0);
    service.killHard();
    long until = System.currentTimeMillis() + 30_000;
    while (shim.sessionState() != SessionState.FALLBACK && System.currentTimeMillis() < until) {
      Thread.sleep(50);
    }
    assertEquals(SessionState.FALLBACK, shim.sessionState());
    // The last node by name: a FIFO fallback that ignored locality would fill the others too.
    SchedulerNode only = shim.nodes().stream().max(Comparator.comparing(SchedulerNode::getNodeName)).get();
    am.requestOnlyOn(4, SMALL, only.getNodeName());
    List<Container> got = am.await(4, 60_000);
    assertEquals(4, got.size(), "containers allocated by the fallback: " + got);
    for (Container c : got) {
      assertEquals(only.getNodeID(), c.getNodeId(), c.getId() + " is off the only node asked for, strictly");
      assertEquals(DollyMPScheduler.Source.FALLBACK, shim.containerSources().get(c.getId()));
    }
  }
}
