package io.dollymp.yarn.demo;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import io.dollymp.yarn.testkit.ExampleJobs;
import io.dollymp.yarn.testkit.MiniClusters;
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

/**
 * {@code make demo}: the decision service as a separate process, a local YARN cluster (RM with the
 * DollyMP shim, 2 NodeManagers), Hadoop's wordcount and sleep jobs; prints what happened.
 */
public final class DemoMain {
  private DemoMain() {}

  public static void main(String[] args) throws Exception {
    Path work = Paths.get("target", "demo").toAbsolutePath();
    FileUtil.fullyDelete(work.toFile());
    say("starting the DollyMP decision service (python -m pyscheduler serve)");
    int exit = 1;
    try (DecisionServiceProcess service = new DecisionServiceProcess(work.resolve("service"), "fcfs")) {
      int port = service.awaitGrpcPort(60_000);
      say("decision service on 127.0.0.1:" + port + ", decision log " + service.db);
      say("starting a local YARN cluster: ResourceManager with the DollyMP shim + 2 NodeManagers");
      MiniMRYarnCluster cluster = MiniClusters.start("dollymp-demo", 2, MiniClusters.shimConf(port));
      try {
        DollyMPScheduler shim = (DollyMPScheduler) cluster.getResourceManager().getResourceScheduler();
        Configuration conf = new Configuration(cluster.getConfig());
        Set<String> apps = new HashSet<>();

        Map<String, Integer> expected = ExampleJobs.writeText(work.resolve("wc-in"), 3, 5000, new Random(7));
        Job wc = ExampleJobs.wordcount(conf, work.resolve("wc-in"), work.resolve("wc-out"), 2);
        long t0 = System.nanoTime();
        boolean wcOk = wc.waitForCompletion(false);
        double wcSec = (System.nanoTime() - t0) / 1e9;
        apps.add(ExampleJobs.appIdOf(wc));
        boolean countsOk = wcOk && expected.equals(ExampleJobs.readCounts(work.resolve("wc-out")));
        say(String.format("wordcount  %s  %-9s %.1f s  counts %s", ExampleJobs.appIdOf(wc),
            wcOk ? "SUCCEEDED" : "FAILED", wcSec, countsOk ? "correct" : "WRONG"));

        Job sj = ExampleJobs.sleep(conf, "dollymp-demo-sleep", 4, 1, 1000, 1000);
        t0 = System.nanoTime();
        boolean sjOk = sj.waitForCompletion(false);
        apps.add(ExampleJobs.appIdOf(sj));
        say(String.format("sleep      %s  %-9s %.1f s", ExampleJobs.appIdOf(sj), sjOk ? "SUCCEEDED" : "FAILED",
            (System.nanoTime() - t0) / 1e9));

        Set<ContainerId> ran = ExampleJobs.containersThatRan(
            Paths.get("target", "test", "data", "dollymp-demo").toAbsolutePath(), apps);
        Map<ContainerId, DollyMPScheduler.Source> sources = shim.containerSources();
        long byService = ran.stream().filter(c -> sources.get(c) == DollyMPScheduler.Source.SERVICE).count();
        say(String.format("containers run: %d, placed by the decision service: %d, by the fallback: %d",
            ran.size(), byService, ran.size() - byService));
        say(String.format("proposals committed %d, dropped %d, plans received %d, session %s",
            shim.proposalsCommitted(), shim.proposalsDropped(), shim.plansReceived(), shim.sessionState()));
        say("decision log (SQLite): " + service.db + "   RM web UI was at http://"
            + cluster.getConfig().get("yarn.resourcemanager.webapp.address"));
        exit = wcOk && countsOk && sjOk && byService == ran.size() ? 0 : 1;
      } finally {
        cluster.stop();
      }
    }
    say(exit == 0 ? "demo OK" : "demo FAILED");
    System.exit(exit);
  }

  private static void say(String line) {
    System.out.println("[dollymp-demo] " + line);
    System.out.flush();
  }
}
