package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.ShimConfig;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import io.dollymp.yarn.testkit.MiniClusters;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.junit.jupiter.api.Test;

/**
 * When the shim commits the service's proposals (yarn.scheduler.dollymp.commit), on Hadoop's own
 * ResourceManager (MockRM: the real RM services and the shim, with NodeManagers that heartbeat only when the
 * test says) and the decision service as a process on a real socket. The one node heartbeats once, to
 * register; then an application is submitted and its AM container's placement is watched.
 */
class CommitOnPlanIT {
  private static final Path WORK = Paths.get("target", "commit-on-plan").toAbsolutePath();

  @Test
  void underPlanTheAmContainerIsCommittedWithoutANodeHeartbeat() throws Exception {
    try (Rig rig = new Rig("plan")) {
      long heartbeats = rig.shim.nodeUpdatesHandled();
      RMAppAttempt attempt = rig.submit();
      assertTrue(rig.awaitMaster(attempt, 15_000),
          "no AM container within 15 s without a heartbeat:\n" + rig.service.logText());
      assertEquals(heartbeats, rig.shim.nodeUpdatesHandled(), "a node heartbeat was handled meanwhile");
      assertEquals(rig.nm.getNodeId(), attempt.getMasterContainer().getNodeId());
      assertEquals(DollyMPScheduler.Source.SERVICE,
          rig.shim.containerSources().get(attempt.getMasterContainer().getId()));
    }
  }

  @Test
  void underHeartbeatTheAmContainerWaitsForItsNodesHeartbeat() throws Exception {
    try (Rig rig = new Rig("heartbeat")) {
      RMAppAttempt attempt = rig.submit();
      // Long enough for several of the shim's batches and the service's plans (100 ms ticks).
      assertFalse(rig.awaitMaster(attempt, 3_000), "committed without a heartbeat under commit=heartbeat");
      rig.nm.nodeHeartbeat(true);
      assertTrue(rig.awaitMaster(attempt, 15_000),
          "no AM container within 15 s of the node's heartbeat:\n" + rig.service.logText());
      assertNotNull(rig.shim.containerSources().get(attempt.getMasterContainer().getId()));
    }
  }

  /** MockRM with the shim (fallback off: only the service places), one node of 8 GB, the service (fcfs). */
  private static final class Rig implements AutoCloseable {
    final DecisionServiceProcess service;
    final MockRM rm;
    final MockNM nm;
    final DollyMPScheduler shim;

    Rig(String commit) throws Exception {
      Path work = WORK.resolve(commit);
      FileUtil.fullyDelete(work.toFile());
      service = new DecisionServiceProcess(work.resolve("service"), "fcfs");
      int port = service.awaitGrpcPort(60_000);
      QueueMetrics.clearQueueMetrics();
      DefaultMetricsSystem.shutdown();
      Configuration conf = new YarnConfiguration();
      conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, false);
      conf.setBoolean(YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME, true);
      conf.setClass(YarnConfiguration.RM_SCHEDULER, DollyMPScheduler.class, ResourceScheduler.class);
      conf.set(ShimConfig.SERVICE_ADDRESS, "127.0.0.1:" + port);
      conf.set(ShimConfig.FALLBACK_POLICY, "none");
      conf.set(ShimConfig.COMMIT, commit);
      MiniClusters.ownNodeAttributeStore(conf, work.resolve("node-attribute"));
      rm = new MockRM(conf);
      rm.start();
      nm = rm.registerNode("127.0.0.1:24001", 8192, 8);
      shim = (DollyMPScheduler) rm.getResourceScheduler();
      long until = System.currentTimeMillis() + 30_000;
      while (shim.sessionState() != SessionState.RUNNING && System.currentTimeMillis() < until) {
        Thread.sleep(20);
      }
      assertEquals(SessionState.RUNNING, shim.sessionState(), "shim never reached RUNNING:\n" + service.logText());
      nm.nodeHeartbeat(true);
      rm.drainEvents();
    }

    RMAppAttempt submit() throws Exception {
      RMApp app = MockRMAppSubmitter.submitWithMemory(1024, rm);
      return MockRM.waitForAttemptScheduled(app, rm);
    }

    /** Whether {@code attempt} has its AM container within {@code ms}, with no heartbeat sent meanwhile. */
    boolean awaitMaster(RMAppAttempt attempt, long ms) throws InterruptedException {
      long until = System.currentTimeMillis() + ms;
      while (attempt.getMasterContainer() == null && System.currentTimeMillis() < until) {
        Thread.sleep(20);
      }
      return attempt.getMasterContainer() != null;
    }

    @Override
    public void close() {
      rm.stop();
      service.close();
    }
  }
}
