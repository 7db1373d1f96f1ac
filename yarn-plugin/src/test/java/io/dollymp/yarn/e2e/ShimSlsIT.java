package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.scheduler.ShimConfig;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import io.dollymp.yarn.testkit.MiniClusters;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.conf.SLSConfiguration;
import org.apache.hadoop.yarn.sls.scheduler.SLSDollyMPScheduler;
import org.junit.jupiter.api.Test;

/**
 * Hadoop's Scheduler Load Simulator runs the shim (SLSDollyMPScheduler) against the real decision
 * service: a small SLS trace of MapReduce jobs on simulated NodeManagers completes.
 */
class ShimSlsIT {
  private static final Path WORK = Paths.get("target", "e2e-sls").toAbsolutePath();
  private static final int JOBS = 2;

  @Test
  void slsRunsTheShimToCompletion() throws Exception {
    FileUtil.fullyDelete(WORK.toFile());
    Files.createDirectories(WORK);
    // A SYNTH trace (SLS's own generator format): SLS 3.4.3 cannot read its JSON ("SLS") traces, whose
    // job.tasks array its reader maps to Map<String, String>.
    Path trace = WORK.resolve("synth.json");
    String task = "{\"type\": \"%s\", \"priority\": %d, \"count\": {\"val\": %d}, \"time\": {\"val\": 2000}, "
        + "\"max_memory\": {\"val\": 1024}, \"max_vcores\": {\"val\": 1}}";
    Files.writeString(trace, "{\"description\": \"dollymp sls\", \"num_nodes\": 3, \"nodes_per_rack\": 3, "
        + "\"num_jobs\": " + JOBS + ", \"rand_seed\": 7, \"workloads\": [{\"workload_name\": \"w\", "
        + "\"workload_weight\": 1.0, \"queue_name\": \"default\", \"job_classes\": [{\"class_name\": \"mr\", "
        + "\"user_name\": \"default\", \"class_weight\": 1.0, \"type\": \"mapreduce\", "
        + "\"deadline_factor\": {\"val\": 10}, \"duration\": {\"val\": 30}, \"reservation\": {\"val\": 0}, "
        + "\"tasks\": [" + String.format(task, "map", 20, 4) + ", " + String.format(task, "reduce", 10, 1) + "]}], "
        + "\"time_distribution\": [{\"time\": 1, \"weight\": 100}, {\"time\": 3, \"weight\": 0}]}]}",
        StandardCharsets.UTF_8);

    try (DecisionServiceProcess service = new DecisionServiceProcess(WORK.resolve("service"), "dollymp")) {
      int port = service.awaitGrpcPort(60_000);
      QueueMetrics.clearQueueMetrics();
      DefaultMetricsSystem.shutdown();
      Configuration conf = new Configuration(false);
      // What SLS's sls-runner.xml would say: the simulator class per AM type.
      conf.set(SLSConfiguration.AM_TYPE_PREFIX + "mapreduce", "org.apache.hadoop.yarn.sls.appmaster.MRAMSimulator");
      conf.set(YarnConfiguration.RM_SCHEDULER, SLSDollyMPScheduler.class.getName());
      conf.set(ShimConfig.SERVICE_ADDRESS, "127.0.0.1:" + port);
      conf.set(ShimConfig.FALLBACK_POLICY, "none");
      conf.setInt(SLSConfiguration.METRICS_WEB_ADDRESS_PORT, freePort());
      conf.setBoolean(SLSConfiguration.METRICS_SWITCH, true);
      conf.setInt(SLSConfiguration.NM_HEARTBEAT_INTERVAL_MS, 250);
      conf.setInt(SLSConfiguration.AM_HEARTBEAT_INTERVAL_MS, 250);
      conf.set(YarnConfiguration.RM_ADDRESS, "127.0.0.1:" + freePort());
      conf.set(YarnConfiguration.RM_SCHEDULER_ADDRESS, "127.0.0.1:" + freePort());
      conf.set(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, "127.0.0.1:" + freePort());
      conf.set(YarnConfiguration.RM_ADMIN_ADDRESS, "127.0.0.1:" + freePort());
      conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "127.0.0.1:" + freePort());
      // SYNTH names its simulated NodeManagers node0..nodeN; container tokens resolve them.
      for (int i = 0; i < 10; i++) {
        org.apache.hadoop.net.NetUtils.addStaticResolution("node" + i, "127.0.0.1");
      }
      Path out = WORK.resolve("out");
      MiniClusters.ownNodeAttributeStore(conf, WORK.resolve("node-attribute"));
      SLSRunner sls = new SLSRunner(conf);
      sls.run(new String[] {"-tracetype", "SYNTH", "-tracelocation", trace.toString(), "-output", out.toString()});
      try {
        long deadline = System.currentTimeMillis() + 180_000;
        List<String> lines = List.of();
        while (System.currentTimeMillis() < deadline) {
          Path runtimes = findRuntimes(out);
          lines = runtimes != null ? Files.readAllLines(runtimes, StandardCharsets.UTF_8) : List.of();
          if (lines.size() >= 1 + JOBS) {
            break;
          }
          Thread.sleep(500);
        }
        assertEquals(1 + JOBS, lines.size(), "header + one line per SLS job expected: " + lines + "\n" + service.logText());
        assertTrue(service.logText().contains("policy dollymp"), "the shim's decisions came from the service");
      } finally {
        sls.stop();
      }
    }
  }

  private static Path findRuntimes(Path out) throws java.io.IOException {
    if (!Files.isDirectory(out)) {
      return null;
    }
    try (var walk = Files.walk(out, 3)) {
      return walk.filter(p -> p.getFileName().toString().equals("jobruntime.csv")).findFirst().orElse(null);
    }
  }

  private static int freePort() throws java.io.IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
