package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import io.dollymp.yarn.testkit.ExampleJobs;
import io.dollymp.yarn.testkit.MiniClusters;
import io.dollymp.yarn.testkit.ServiceQueries;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashSet;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * End to end through a real ResourceManager: Hadoop's in-process mini YARN cluster (RM with the
 * DollyMP shim, 2 NodeManagers) and the Python decision service as a separate process on a real
 * socket; real MapReduce jobs from Hadoop's examples.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ShimEndToEndIT {
  private static final String NAME = "dollymp-e2e";
  private static final Path WORK = Paths.get("target", "e2e").toAbsolutePath();
  private static final Path NM_DIRS = Paths.get("target", "test", "data", NAME).toAbsolutePath();
  private static DecisionServiceProcess service;
  private static MiniMRYarnCluster cluster;
  private static DollyMPScheduler shim;
  private static final Set<String> jobAppIds = new HashSet<>();

  @BeforeAll
  static void startCluster() throws Exception {
    FileUtil.fullyDelete(WORK.toFile());
    service = new DecisionServiceProcess(WORK.resolve("service"), "fcfs");
    int port = service.awaitGrpcPort(60_000);
    cluster = MiniClusters.start(NAME, 2, MiniClusters.shimConf(port));
    shim = (DollyMPScheduler) cluster.getResourceManager().getResourceScheduler();
    long deadline = System.currentTimeMillis() + 30_000;
    while (shim.sessionState() != SessionState.RUNNING && System.currentTimeMillis() < deadline) {
      Thread.sleep(100);
    }
    assertEquals(SessionState.RUNNING, shim.sessionState(), "shim never reached RUNNING:\n" + service.logText());
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (cluster != null) {
      MiniClusters.stop(cluster);
    }
    if (service != null) {
      service.close();
    }
  }

  @Test
  @Order(1)
  void wordcountAndSleepRunOnServicePlacements() throws Exception {
    Configuration conf = new Configuration(cluster.getConfig());
    Path input = WORK.resolve("wc-in");
    Map<String, Integer> expected = ExampleJobs.writeText(input, 3, 2000, new Random(42));
    Path output = WORK.resolve("wc-out");
    Job wc = ExampleJobs.wordcount(conf, input, output, 2);
    assertTrue(wc.waitForCompletion(true), "wordcount failed");
    jobAppIds.add(ExampleJobs.appIdOf(wc));
    assertEquals(expected, ExampleJobs.readCounts(output), "wordcount counts differ from the generated text's");

    Job sj = ExampleJobs.sleep(conf, "dollymp-e2e-sleep", 3, 1, 500, 500);
    assertTrue(sj.waitForCompletion(true), "sleep job failed");
    jobAppIds.add(ExampleJobs.appIdOf(sj));

    Set<ContainerId> ran = ExampleJobs.containersThatRan(NM_DIRS, jobAppIds);
    assertTrue(ran.size() >= 2 + 3 + 2, "expected AM + task containers, found " + ran);
    Map<ContainerId, DollyMPScheduler.Source> sources = shim.containerSources();
    for (ContainerId c : ran) {
      assertEquals(DollyMPScheduler.Source.SERVICE, sources.get(c), "container " + c + " not placed by the service");
    }
    assertEquals(0, shim.fallbackMs(), "fallback should never have been used while the service was up");
    assertTrue(shim.proposalsCommitted() >= ran.size());
  }

  @Test
  @Order(2)
  void serviceSawApplicationsAndNodes() throws Exception {
    String decisions = ServiceQueries.dumpDecisions(service.db);
    for (String app : jobAppIds) {
      assertTrue(decisions.contains(app), "service has no decision for " + app);
    }
    // The service's live state (HTTP API) lists every NodeManager of the cluster.
    String state = ServiceQueries.dumpState(service.awaitHttpPort(10_000));
    for (org.apache.hadoop.yarn.api.records.NodeId id
        : cluster.getResourceManager().getRMContext().getRMNodes().keySet()) {
      assertTrue(state.contains(id.toString()), "service state lacks node " + id + ": " + state);
    }
  }

  @Test
  @Order(3)
  void killingTheServiceDoesNotHangTheResourceManager() throws Exception {
    Configuration conf = new Configuration(cluster.getConfig());
    Job sj = ExampleJobs.sleep(conf, "dollymp-e2e-sleep-during-kill", 4, 1, 3000, 1000);
    ExampleJobs.submitAndAwaitMaps(sj, 60_000);
    service.killHard(); // kill -9 while the job is running
    assertFalse(service.isAlive());
    long before = shim.nodeUpdatesHandled();
    Thread.sleep(3000);
    long after = shim.nodeUpdatesHandled();
    // 2 NMs at a 250 ms heartbeat for 3 s: ~24 heartbeats; the event thread must keep handling them.
    assertTrue(after - before >= 8, "RM event thread stalled: " + (after - before) + " heartbeats in 3 s");
    assertTrue(sj.waitForCompletion(true), "job submitted before the kill must finish under the fallback policy");
    assertTrue(shim.fallbackMs() > 0, "fallback time must be recorded");
    assertEquals(SessionState.FALLBACK, shim.sessionState());
  }
}
