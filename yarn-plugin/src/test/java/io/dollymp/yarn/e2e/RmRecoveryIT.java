package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import io.dollymp.yarn.testkit.ExampleJobs;
import io.dollymp.yarn.testkit.MiniClusters;
import io.dollymp.yarn.testkit.RecoveryClusters;
import io.dollymp.yarn.testkit.ServiceQueries;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashSet;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.ha.HAServiceProtocol;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Work-preserving ResourceManager restart and RM HA failover with the shim, mid-job: the same application
 * (its first and only attempt, so its ApplicationMaster was never restarted) finishes SUCCEEDED; the new RM's
 * shim takes the running containers over from the NodeManagers' reports instead of killing them (exactly
 * AM + maps + reduce containers ran, so no map ran twice); the decision service sees them in the new RM's
 * session; and the new RM places the containers asked for after the switch (the reduce).
 */
class RmRecoveryIT {
  private static final Path WORK = Paths.get("target", "e2e-rm-recovery").toAbsolutePath();
  private static final int MAPS = 4;
  private static final long MAP_MS = 15_000;
  private static DecisionServiceProcess service;
  private static int grpcPort;
  private static int httpPort;
  private MiniYARNCluster cluster;
  private YarnClient yarn;

  @BeforeAll
  static void startService() throws Exception {
    FileUtil.fullyDelete(WORK.toFile());
    try (ServerSocket s = new ServerSocket(0)) {
      grpcPort = s.getLocalPort();
    }
    service = new DecisionServiceProcess(WORK.resolve("service"), "dollymp", grpcPort);
    service.awaitGrpcPort(60_000);
    httpPort = service.awaitHttpPort(30_000);
  }

  @AfterAll
  static void stopService() {
    if (service != null) {
      service.close();
    }
  }

  @AfterEach
  void stopCluster() {
    if (yarn != null) {
      yarn.stop();
    }
    if (cluster != null) {
      MiniClusters.stop(cluster);
    }
  }

  @Test
  void restartMidJobKeepsTheApplicationAndItsContainers() throws Exception {
    String name = "dollymp-rm-restart";
    Configuration conf = RecoveryClusters.conf(grpcPort, WORK.resolve("restart"), 1);
    cluster = RecoveryClusters.start(name, 1, 2, conf);
    survivesTheSwitch(name, () -> cluster.restartResourceManager(0));
  }

  @Test
  void failoverMidJobToTheStandbyKeepsTheApplicationAndItsContainers() throws Exception {
    String name = "dollymp-rm-failover";
    Configuration conf = RecoveryClusters.conf(grpcPort, WORK.resolve("failover"), 2);
    cluster = RecoveryClusters.start(name, 2, 2, conf);
    assertEquals(0, cluster.getActiveRMIndex(), "rm0 starts active");
    survivesTheSwitch(name, () -> {
      HAServiceProtocol.StateChangeRequestInfo byUser =
          new HAServiceProtocol.StateChangeRequestInfo(HAServiceProtocol.RequestSource.REQUEST_BY_USER);
      cluster.getResourceManager(0).getRMContext().getRMAdminService().transitionToStandby(byUser);
      cluster.getResourceManager(1).getRMContext().getRMAdminService().transitionToActive(byUser);
      assertEquals(1, cluster.getActiveRMIndex(), "rm1 is active after the failover");
    });
  }

  /** What switches the active RM: a restart, or a failover to the standby. */
  private interface Switch {
    void run() throws Exception;
  }

  private void survivesTheSwitch(String name, Switch rmSwitch) throws Exception {
    ResourceManager before = cluster.getResourceManager();
    DollyMPScheduler oldShim = RecoveryClusters.shim(before);
    awaitSession(oldShim, 60_000);
    yarn = YarnClient.createYarnClient();
    yarn.init(new YarnConfiguration(cluster.getConfig()));
    yarn.start();

    Configuration jobConf = new Configuration(cluster.getConfig());
    jobConf.setBoolean(MRJobConfig.MAP_SPECULATIVE, false);
    jobConf.setBoolean(MRJobConfig.REDUCE_SPECULATIVE, false);
    jobConf.setFloat(MRJobConfig.COMPLETED_MAPS_FOR_REDUCE_SLOWSTART, 1.0f); // the reduce is asked for after
    Job job = ExampleJobs.sleep(jobConf, name, MAPS, 1, MAP_MS, 500);
    job.submit();
    ApplicationId app = ApplicationId.fromString(ExampleJobs.appIdOf(job));

    // Mid-job: the AM and every map run (maps of 15 s, so they outlive the switch).
    long until = System.currentTimeMillis() + 120_000;
    Set<ContainerId> runningBefore = RecoveryClusters.running(oldShim, app);
    while (runningBefore.size() < 1 + MAPS && System.currentTimeMillis() < until) {
      Thread.sleep(200);
      runningBefore = RecoveryClusters.running(oldShim, app);
    }
    assertEquals(1 + MAPS, runningBefore.size(), "AM and maps running before the switch: " + runningBefore);
    ApplicationAttemptId attempt = before.getRMContext().getRMApps().get(app).getCurrentAppAttempt()
        .getAppAttemptId();
    ContainerId am = before.getRMContext().getRMApps().get(app).getCurrentAppAttempt().getMasterContainer().getId();
    rmSwitch.run();

    ResourceManager after = cluster.getResourceManager();
    assertNotNull(after, "an active RM after the switch");
    assertNotSame(before, after);
    DollyMPScheduler shim = RecoveryClusters.shim(after);
    assertNotSame(oldShim, shim);

    // The NodeManagers re-register with their containers: the new shim holds every one still running.
    until = System.currentTimeMillis() + 60_000;
    while (shim.containersRecovered() < runningBefore.size() && System.currentTimeMillis() < until) {
      Thread.sleep(100);
    }
    Set<ContainerId> recovered = RecoveryClusters.running(shim, app);
    assertTrue(shim.containersRecovered() >= runningBefore.size() && recovered.containsAll(runningBefore),
        "the new RM recovered " + shim.containersRecovered() + " containers, holds " + recovered + "; running before: "
            + runningBefore);
    assertEquals(oldShim.amUsed(), shim.amUsed(), "the recovered AM container counts in the AM share");

    // The decision service sees them in the session the new RM registered (it superseded the old RM's, which
    // had the same rm_id): the containers it mirrors for the application are the ones the new RM holds.
    awaitSession(shim, 60_000);
    until = System.currentTimeMillis() + 30_000;
    int mirrored = serviceContainersOf(app);
    int held = RecoveryClusters.running(shim, app).size();
    while ((mirrored != held || held == 0) && System.currentTimeMillis() < until) {
      Thread.sleep(200);
      mirrored = serviceContainersOf(app);
      held = RecoveryClusters.running(shim, app).size();
    }
    assertTrue(held > 0 && mirrored == held, "the service mirrors " + mirrored + " containers of " + app
        + ", the new RM holds " + held);

    // The same application finishes, in its first attempt, on the new RM.
    ApplicationReport report = awaitFinished(app, 240_000);
    assertEquals(YarnApplicationState.FINISHED, report.getYarnApplicationState(), report.getDiagnostics());
    assertEquals(FinalApplicationStatus.SUCCEEDED, report.getFinalApplicationStatus(), report.getDiagnostics());
    assertEquals(attempt, report.getCurrentApplicationAttemptId(), "the AM was never restarted");
    assertEquals(1, yarn.getApplicationAttempts(app).size(), "one attempt");
    assertEquals(1, yarn.getApplications().size(), "no application lost or added");

    // Nothing ran twice: the AM, each map once (none killed and re-run), and the reduce placed by the new RM.
    Path logs = Paths.get("target", "test", "data", name).toAbsolutePath();
    Set<ContainerId> ran = ExampleJobs.containersThatRan(logs, Set.of(app.toString()));
    assertEquals(1 + MAPS + 1, ran.size(), "containers that ran: " + ran);
    Set<ContainerId> placedAfter = new HashSet<>(ran);
    placedAfter.removeAll(runningBefore);
    assertEquals(1, placedAfter.size(), "the reduce, placed after the switch: " + placedAfter);
    assertTrue(shim.proposalsCommitted() + shim.fallbackContainers() > 0, "the new RM placed the reduce");
  }

  private static void awaitSession(DollyMPScheduler shim, long timeoutMs) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (shim.sessionState() != SessionState.RUNNING && System.currentTimeMillis() < deadline) {
      Thread.sleep(100);
    }
    assertEquals(SessionState.RUNNING, shim.sessionState());
  }

  /** The running containers the decision service mirrors for {@code app} (-1: it does not know the app). */
  private static int serviceContainersOf(ApplicationId app) throws Exception {
    JsonNode state = new ObjectMapper().readTree(ServiceQueries.dumpState(httpPort));
    for (JsonNode a : state.get("applications")) {
      if (app.toString().equals(a.get("application_id").asText())) {
        return a.get("running_containers").asInt();
      }
    }
    return -1;
  }

  private ApplicationReport awaitFinished(ApplicationId app, long timeoutMs) throws Exception {
    long deadline = System.currentTimeMillis() + timeoutMs;
    ApplicationReport r = yarn.getApplicationReport(app);
    while (System.currentTimeMillis() < deadline && r.getYarnApplicationState() != YarnApplicationState.FINISHED
        && r.getYarnApplicationState() != YarnApplicationState.FAILED
        && r.getYarnApplicationState() != YarnApplicationState.KILLED) {
      Thread.sleep(500);
      r = yarn.getApplicationReport(app);
    }
    return r;
  }
}
