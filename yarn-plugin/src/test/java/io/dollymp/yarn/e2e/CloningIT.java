package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.am.AmConfig;
import io.dollymp.yarn.am.CloningSpeculator;
import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.AttemptRecords;
import io.dollymp.yarn.testkit.AttemptRecords.Row;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import io.dollymp.yarn.testkit.ExampleJobs;
import io.dollymp.yarn.testkit.MiniClusters;
import io.dollymp.yarn.testkit.ServiceQueries;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobCounter;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The AM helper end to end: real mini YARN cluster (RM with the shim, 3 NodeManagers), the real Python
 * decision service with the dollymp policy on a real socket, Hadoop's WordCount with and without clones.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CloningIT {
  private static final String NAME = "dollymp-cloning";
  private static final Path WORK = Paths.get("target", "cloning-it").toAbsolutePath();
  private static DecisionServiceProcess service;
  private static MiniMRYarnCluster cluster;
  private static int port;
  private static String clonedApp;

  @BeforeAll
  static void startCluster() throws Exception {
    FileUtil.fullyDelete(WORK.toFile());
    service = new DecisionServiceProcess(WORK.resolve("service"), "dollymp");
    port = service.awaitGrpcPort(60_000);
    cluster = MiniClusters.start(NAME, 3, MiniClusters.shimConf(port));
    DollyMPScheduler shim = (DollyMPScheduler) cluster.getResourceManager().getResourceScheduler();
    long deadline = System.currentTimeMillis() + 30_000;
    while (shim.sessionState() != SessionState.RUNNING && System.currentTimeMillis() < deadline) {
      Thread.sleep(100);
    }
    assertEquals(SessionState.RUNNING, shim.sessionState(), "shim never reached RUNNING:\n" + service.logText());
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.stop();
    }
    if (service != null) {
      service.close();
    }
  }

  static Configuration helperConf(String address, boolean clones) {
    Configuration conf = new Configuration(cluster.getConfig());
    conf.setBoolean(MRJobConfig.MAP_SPECULATIVE, clones);
    conf.setBoolean(MRJobConfig.REDUCE_SPECULATIVE, clones);
    conf.set(MRJobConfig.MR_AM_JOB_SPECULATOR, CloningSpeculator.class.getName());
    conf.set(AmConfig.SERVICE_ADDRESS, address);
    conf.set(AmConfig.RECORD_DIR, WORK.resolve("records").toUri().toString());
    return conf;
  }

  @Test
  @Order(1)
  void clonedWordcountMatchesUnclonedAndLosersAreKilled() throws Exception {
    Path input = WORK.resolve("wc-in");
    Map<String, Integer> expected = ExampleJobs.writeText(input, 3, 3000, new Random(7));

    Job plain = ExampleJobs.wordcount(helperConf("127.0.0.1:" + port, false), input, WORK.resolve("out-plain"), 2);
    assertTrue(plain.waitForCompletion(false), "uncloned wordcount failed");
    Job cloned = ExampleJobs.wordcount(helperConf("127.0.0.1:" + port, true), input, WORK.resolve("out-cloned"), 2);
    assertTrue(cloned.waitForCompletion(false), "cloned wordcount failed");
    clonedApp = ExampleJobs.appIdOf(cloned);

    Map<String, Integer> plainCounts = ExampleJobs.readCounts(WORK.resolve("out-plain"));
    assertEquals(expected, plainCounts, "uncloned counts differ from the generated text's");
    assertEquals(plainCounts, ExampleJobs.readCounts(WORK.resolve("out-cloned")), "clones changed the output");

    Map<String, List<Row>> rows =
        AttemptRecords.awaitFinal(WORK.resolve("records").resolve(clonedApp + ".tsv"), 60_000);
    assertEquals(3 + 2, rows.size(), "one record per task: " + rows.keySet());
    long clones = rows.values().stream().flatMap(List::stream).filter(Row::isClone).count();
    assertTrue(clones >= 1, "the dollymp policy granted no clone for a small job:\n" + rows);
    for (Map.Entry<String, List<Row>> e : rows.entrySet()) {
      List<Row> as = e.getValue();
      assertTrue(as.size() <= 3, "more than three copies of " + e.getKey() + ": " + as);
      List<Row> winners = as.stream().filter(Row::winner).toList();
      assertEquals(1, winners.size(), "exactly one winner per task: " + as);
      assertEquals("SUCCEEDED", winners.get(0).state());
      for (Row r : as) {
        if (!r.winner()) {
          assertEquals("KILLED", r.state(), "a losing copy must be killed: " + r);
        }
      }
    }
    // Killed copies that had a container: their containers ran and were stopped (Hadoop's
    // KILLED_MAPS/REDUCES counters count exactly these kills).
    long killedWithContainer = rows.values().stream().flatMap(List::stream)
        .filter(r -> r.state().equals("KILLED") && !r.container().isEmpty()).count();
    long killedCounter = cloned.getCounters().findCounter(JobCounter.NUM_KILLED_MAPS).getValue()
        + cloned.getCounters().findCounter(JobCounter.NUM_KILLED_REDUCES).getValue();
    assertEquals(killedWithContainer, killedCounter, "kills recorded by the AM vs Hadoop's counters");
  }

  @Test
  @Order(2)
  void serviceLogShowsGrantsAndReports() throws Exception {
    String decisions = ServiceQueries.dumpDecisions(service.db);
    assertTrue(decisions.contains(clonedApp), "no decision names " + clonedApp);
    assertTrue(decisions.toLowerCase().contains("clone"), "no clone grant in the decision log");
    String log = service.logText();
    assertTrue(log.contains("ReportAttempts") && log.contains(clonedApp),
        "the service log does not show the AM's reports:\n" + log);
  }

  @Test
  @Order(3)
  void unreachableServiceMeansNoClonesAndSuccess() throws Exception {
    int dead;
    try (ServerSocket s = new ServerSocket(0)) {
      dead = s.getLocalPort(); // closed again: nothing listens there
    }
    Path input = WORK.resolve("wc-in");
    Job job = ExampleJobs.wordcount(helperConf("127.0.0.1:" + dead, true), input, WORK.resolve("out-dead"), 1);
    assertTrue(job.waitForCompletion(false), "job failed with the service unreachable from the AM");
    assertEquals(ExampleJobs.readCounts(WORK.resolve("out-plain")), ExampleJobs.readCounts(WORK.resolve("out-dead")));
    Map<String, List<Row>> rows = AttemptRecords.awaitFinal(
        WORK.resolve("records").resolve(ExampleJobs.appIdOf(job) + ".tsv"), 60_000);
    assertFalse(rows.values().stream().flatMap(List::stream).anyMatch(Row::isClone), "clones without a service");
    assertTrue(rows.values().stream().allMatch(as -> as.size() == 1), "extra attempts without a service: " + rows);
  }
}
