package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.am.AmConfig;
import io.dollymp.yarn.am.CloningSpeculator;
import io.dollymp.yarn.am.DollyMPClientProtocolProvider;
import io.dollymp.yarn.am.PlanOverride;
import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.AttemptRecords;
import io.dollymp.yarn.testkit.AttemptRecords.Row;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import io.dollymp.yarn.testkit.ExampleJobs;
import io.dollymp.yarn.testkit.MiniClusters;
import io.dollymp.yarn.testkit.ServiceQueries;
import io.dollymp.yarn.workload.StragglerJob;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobCounter;
import org.apache.hadoop.mapreduce.MRConfig;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The AM helper end to end: real mini YARN cluster (RM with the shim, 3 NodeManagers), the real Python
 * decision service with the dollymp-ext policy on a real socket, Hadoop's WordCount with and without clones.
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
    // Clones yield to waiting originals (the default; set here so the yield test does not depend on it).
    // The clone mechanism is tested under dollymp-ext with launch clones for small jobs and late copies: on a
    // cold service the paper's Corollary 4.1 sees no run-time spread yet and grants no clone at all.
    service = new DecisionServiceProcess(WORK.resolve("service"), "dollymp-ext", 0,
        Map.of("DOLLYMP_APPMASTER_CLONE_YIELD", "true",
            "DOLLYMP_POLICY_OPTIONS", "{\"clone_rule\": \"none\", \"sigma_factor\": 1}"));
    port = service.awaitGrpcPort(60_000);
    Configuration conf = MiniClusters.shimConf(port);
    // A stopped NodeManager of the mini cluster does not unregister: the RM declares it lost when it has
    // been silent this long (Hadoop's default is 10 min), and only then are its containers completed.
    conf.setLong(YarnConfiguration.RM_NM_EXPIRY_INTERVAL_MS, 15_000);
    cluster = MiniClusters.startWithShim(NAME, 3, conf, 30_000);
    DollyMPScheduler shim = (DollyMPScheduler) cluster.getResourceManager().getResourceScheduler();
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
    assertTrue(clones >= 1, "the dollymp-ext policy granted no clone for a small job:\n" + rows);
    for (Map.Entry<String, List<Row>> e : rows.entrySet()) {
      List<Row> as = e.getValue();
      // A copy is an attempt that got a container. Hadoop itself may add an attempt that never runs: when
      // a copy reaches COMMIT_PENDING after another got the commit go-ahead, TaskImpl kills it and
      // schedules a replacement, which is killed unlaunched once the committing copy succeeds.
      assertTrue(launched(as) <= 3, "more than three copies of " + e.getKey() + ": " + as);
      List<Row> winners = as.stream().filter(Row::winner).toList();
      assertEquals(1, winners.size(), "exactly one winner per task: " + as);
      assertEquals("SUCCEEDED", winners.get(0).state());
      for (Row r : as) {
        if (!r.winner()) {
          assertEquals("KILLED", r.state(), "a losing copy must be killed: " + r);
        }
      }
    }
    // Hadoop's KILLED_MAPS/REDUCES counters count every attempt that ends KILLED (TaskAttemptImpl's killed
    // transition counts it whether or not the attempt got a container: in Hadoop 3.4 an attempt killed
    // unlaunched, such as the replacement Hadoop schedules in a reduce commit race, is counted too). The
    // AM record lists every attempt, so the counts match the record's KILLED rows. Reduces are compared
    // with <= only: a reduce copy killed after it reported done is ignored by Hadoop ("Ignoring killed
    // event for successful reduce task attempt") but may be recorded as killed.
    long killedMapRows = rows.values().stream().flatMap(List::stream)
        .filter(r -> r.state().equals("KILLED") && r.phase().equals("map")).count();
    long killedReduceRows = rows.values().stream().flatMap(List::stream)
        .filter(r -> r.state().equals("KILLED") && r.phase().equals("reduce")).count();
    long killedMaps = cloned.getCounters().findCounter(JobCounter.NUM_KILLED_MAPS).getValue();
    long killedReduces = cloned.getCounters().findCounter(JobCounter.NUM_KILLED_REDUCES).getValue();
    assertEquals(killedMapRows, killedMaps, "map kills: AM record vs Hadoop:\n" + rows);
    assertTrue(killedReduces <= killedReduceRows, "reduce kills: AM record vs Hadoop:\n" + rows);
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
    // Clones wait at least one AM allocator heartbeat for their containers, during which the helper
    // reports them as waiting: the service places those last, in idle capacity (service/round/clones.py).
    assertTrue(java.util.regex.Pattern.compile("ReportAttempts " + clonedApp + ": .*\\(([1-9]\\d*) waiting")
        .matcher(log).find(), "the AM never reported a clone waiting for its container:\n" + log);
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

  @Test
  @Order(4)
  void delayAssignmentReduceClonesReadDistinctCopiesWithinOmegaElseAny() throws Exception {
    Configuration conf = helperConf("127.0.0.1:" + port, true);
    conf.set(MRConfig.FRAMEWORK_NAME, DollyMPClientProtocolProvider.FRAMEWORK_NAME); // the opt-in
    conf.unset(MRJobConfig.MAP_SPECULATIVE); // the provider's defaults must switch cloning on
    conf.unset(MRJobConfig.REDUCE_SPECULATIVE);
    conf.set(PlanOverride.KEY, "map=1,reduce=1,omega=" + OMEGA_S);
    conf.setFloat(MRJobConfig.COMPLETED_MAPS_FOR_REDUCE_SLOWSTART, 0f);
    fixedStraggler(conf, 2, 3000, 500, 50); // no random stragglers here: the slow copies are pinned below
    // Map 1's clone is far slower than ω (so reduce clone 1 must fall back); reduce copy 0 runs long
    // after its shuffle, so reduce clone 1 finishes its shuffle and wins.
    conf.set(StragglerJob.SLOW_ATTEMPTS, "m1.1=40,r0.0=120");
    Job job = StragglerJob.create(conf, "dollymp-delay-assignment");
    assertTrue(job.waitForCompletion(false), "delay-assignment job failed");
    assertEquals(100, job.getCounters().findCounter("dollymp", "records").getValue(), "records lost or doubled");
    String app = ExampleJobs.appIdOf(job);
    String jobNo = app.substring("application_".length());

    Path fetch = WORK.resolve("records").resolve("fetch");
    Map<String, String[]> clone1 = fetchRows(fetch.resolve("attempt_" + jobNo + "_r_000000_1.tsv"));
    assertEquals("attempt_" + jobNo + "_m_000000_1", clone1.get("0")[1], "reduce clone 1 did not read map copy 1");
    assertTrue(clone1.get("0")[2].startsWith("own copy"), String.join(" ", clone1.get("0")));
    assertEquals("attempt_" + jobNo + "_m_000001_0", clone1.get("1")[1], "fallback must read the finished copy");
    // After ω either the reducer's own clock ran out or the AM killed the slow copy at its ω (the
    // AM's clock starts at the map's success, the reducer's when it learns of it, a moment later).
    assertTrue(Set.of("omega elapsed", "own copy lost").contains(clone1.get("1")[2]), clone1.get("1")[2]);
    Map<String, String[]> orig = fetchRows(fetch.resolve("attempt_" + jobNo + "_r_000000_0.tsv"));
    assertEquals("attempt_" + jobNo + "_m_000000_0", orig.get("0")[1], "reduce copy 0 did not read map copy 0");

    Map<String, List<Row>> rows = AttemptRecords.awaitFinal(WORK.resolve("records").resolve(app + ".tsv"), 60_000);
    Map<String, String> state = new java.util.HashMap<>();
    rows.values().stream().flatMap(List::stream).forEach(r -> state.put(r.attempt(), r.state()));
    assertEquals("SUCCEEDED", state.get("attempt_" + jobNo + "_m_000000_1"), "map copy 1 was not kept for ω");
    assertEquals("KILLED", state.get("attempt_" + jobNo + "_m_000001_1"), "the slow map copy outlived ω");
    Map<String, Row> byAttempt = new java.util.HashMap<>();
    rows.values().stream().flatMap(List::stream).forEach(r -> byAttempt.put(r.attempt(), r));
    // The fallback comes ω after map 1's success whichever clock ran out: the AM's (its kill of the slow
    // copy, ω after the success) or the reducer's (from when it learned of the success, which is later by
    // as much as the reduce clone launched after it): the read's own time against the AM's record.
    long fellBackAfter = Long.parseLong(clone1.get("1")[5])
        - byAttempt.get("attempt_" + jobNo + "_m_000001_0").finishMs();
    assertTrue(fellBackAfter >= (OMEGA_S - 2) * 1000L, "fell back " + fellBackAfter + " ms after the success");
    long keptFor = byAttempt.get("attempt_" + jobNo + "_m_000001_1").finishMs()
        - byAttempt.get("attempt_" + jobNo + "_m_000001_0").finishMs();
    assertTrue(keptFor >= OMEGA_S * 1000L, "the losing map copy was killed " + keptFor + " ms after the win, before ω");
    assertTrue(rows.values().stream().allMatch(as -> launched(as) <= 3), "more than three copies: " + rows);

    // The reads reach the service through the AM (AttemptReport.map_reads), logged as map_read decisions.
    String r1 = "attempt_" + jobNo + "_r_000000_1";
    String ownRead = awaitDecision("map_read", "own_copy", r1 + " read attempt_" + jobNo + "_m_000000_1");
    assertTrue(ownRead.contains("MAP_READ_OWN_COPY") && ownRead.contains("task_" + jobNo + "_r_000000"), ownRead);
    String fallback = awaitDecision("map_read", "first_copy", r1 + " read attempt_" + jobNo + "_m_000001_0");
    assertTrue(fallback.contains(clone1.get("1")[2]), "the reduce copy's reason is logged: " + fallback);
    String r0 = "attempt_" + jobNo + "_r_000000_0";
    awaitDecision("map_read", "own_copy", r0 + " read attempt_" + jobNo + "_m_000000_0");
  }

  /** The decision-log row of that kind and reason whose text contains {@code text} (waits up to 30 s). */
  private static String awaitDecision(String kind, String reason, String text) throws Exception {
    long deadline = System.currentTimeMillis() + 30_000;
    String dump = "";
    while (System.currentTimeMillis() < deadline) {
      dump = ServiceQueries.dumpDecisions(service.db);
      for (String line : dump.split("\n")) {
        if (line.contains("'" + kind + "'") && line.contains("'" + reason + "'") && line.contains(text)) {
          return line;
        }
      }
      Thread.sleep(500);
    }
    throw new AssertionError("no " + kind + "/" + reason + " decision with " + text + " in the log:\n"
        + dump.lines().filter(l -> l.contains(kind)).collect(java.util.stream.Collectors.joining("\n")));
  }

  private static final int OMEGA_S = 20;

  /** A StragglerJob of {@code maps} maps and one reduce whose every attempt takes exactly its base. */
  private static void fixedStraggler(Configuration conf, int maps, long mapMs, long reduceMs, int records) {
    conf.setInt(StragglerJob.MAPS, maps);
    conf.setInt(StragglerJob.REDUCES, 1);
    conf.setLong(StragglerJob.MAP_BASE_MS, mapMs);
    conf.setLong(StragglerJob.REDUCE_BASE_MS, reduceMs);
    conf.setDouble(StragglerJob.CAP, 1.0);
    conf.setInt(StragglerJob.RECORDS, records);
  }

  /** Attempts of a task that got a container (its copies). */
  private static long launched(List<Row> attempts) {
    return attempts.stream().filter(r -> !r.container().isEmpty()).count();
  }

  private static Map<String, String[]> fetchRows(Path file) throws Exception {
    long deadline = System.currentTimeMillis() + 30_000;
    while (!java.nio.file.Files.exists(file) && System.currentTimeMillis() < deadline) {
      Thread.sleep(250);
    }
    Map<String, String[]> out = new java.util.HashMap<>();
    for (String line : java.nio.file.Files.readAllLines(file)) {
      if (!line.startsWith("map_index")) {
        String[] f = line.split("\t");
        out.put(f[0], f);
      }
    }
    return out;
  }

  /** Fault: the NodeManager running a clone goes away mid-run (stopped: it leaves the cluster). */
  @Test
  @Order(5)
  void losingACloneNodeMidRunTheJobStillSucceeds() throws Exception {
    Configuration conf = helperConf("127.0.0.1:" + port, true);
    conf.set(PlanOverride.KEY, "map=1,reduce=0");
    // The AM's stop request to the vanished NodeManager would otherwise retry for Hadoop's default 3 min.
    conf.setLong("yarn.client.nodemanager-connect.max-wait-ms", 3000);
    conf.setLong("yarn.client.nodemanager-connect.retry-interval-ms", 1000);
    conf.setInt("ipc.client.connect.max.retries", 1);
    // The lost node may hold a task's every copy (the shim may place a clone beside its original). The AM
    // then learns of the loss from the attempts' silence: Hadoop's 10 min task timeout would make this test
    // last that long, 30 s does the same (a live task pings its AM every 3 s).
    conf.setLong(MRJobConfig.TASK_TIMEOUT, 30_000);
    fixedStraggler(conf, 3, 20_000, 200, 30);
    Job job = StragglerJob.create(conf, "dollymp-clone-node-lost");
    job.submit();
    String app = ExampleJobs.appIdOf(job);
    int victim = -1;
    String lostContainer = null;
    long deadline = System.currentTimeMillis() + 120_000;
    while (victim < 0 && System.currentTimeMillis() < deadline) {
      for (int i = 0; i < 3 && victim < 0; i++) {
        List<ContainerId> here = cluster.getNodeManager(i).getNMContext().getContainers().keySet().stream()
            .filter(c -> c.getApplicationAttemptId().getApplicationId().toString().equals(app)).toList();
        boolean hostsAm = here.stream().anyMatch(c -> c.getContainerId() == 1);
        // Containers 2..4 are the three maps; later ones, while no map has finished, are their clones.
        ContainerId clone = here.stream().filter(c -> c.getContainerId() > 4).findFirst().orElse(null);
        if (!hostsAm && clone != null && job.mapProgress() < 0.3f) {
          victim = i;
          lostContainer = clone.toString();
        }
      }
      Thread.sleep(250);
    }
    assertTrue(victim >= 0, "no clone ran on a NodeManager without the AM");
    cluster.getNodeManager(victim).stop();
    assertTrue(job.waitForCompletion(false), "the job failed after a clone's node was lost");
    assertEquals(30 * 3, job.getCounters().findCounter("dollymp", "records").getValue());
    Map<String, List<Row>> rows = AttemptRecords.awaitFinal(WORK.resolve("records").resolve(app + ".tsv"), 60_000);
    String lost = lostContainer;
    Row onLost = rows.values().stream().flatMap(List::stream).filter(r -> r.container().equals(lost)).findFirst()
        .orElseThrow(() -> new AssertionError("no attempt ran in " + lost + ": " + rows));
    assertTrue(onLost.isClone(), "the container on the lost node was not a clone: " + onLost);
    assertFalse(onLost.winner(), "a copy on the lost node cannot have won: " + onLost);
  }

  /**
   * Clones yield (service/round/yielding.py): a job whose map clones fill the cluster, then a second job. The
   * service names clones for the shim to preempt, so the second job's AM and tasks start while the first
   * job's originals run on; both succeed, and the first loses only clones.
   */
  @Test
  @Order(6)
  void clonesYieldTheirContainersToALaterJobsOriginals() throws Exception {
    DollyMPScheduler shim = (DollyMPScheduler) cluster.getResourceManager().getResourceScheduler();
    long preemptedBefore = shim.containersPreempted();
    Configuration conf = helperConf("127.0.0.1:" + port, true);
    // The project's AM: Hadoop's own would replace a preempted clone with a new attempt, so the service
    // preempts only clones of jobs whose AM lets them go (JobProfile.clones_preemptible).
    conf.set(MRConfig.FRAMEWORK_NAME, DollyMPClientProtocolProvider.FRAMEWORK_NAME);
    conf.set(PlanOverride.KEY, "map=2,reduce=0");
    fixedStraggler(conf, 8, 90_000, 200, 10); // 24 copies: more than the 14-22 containers of 2-3 NodeManagers
    Job big = StragglerJob.create(conf, "dollymp-clones-fill");
    big.submit();
    // wait until the cluster is full: no room left for another job's AM container
    long deadline = System.currentTimeMillis() + 120_000;
    while (System.currentTimeMillis() < deadline && freeMb() >= 512) {
      Thread.sleep(250);
    }
    assertTrue(freeMb() < 512, "the first job's copies never filled the cluster; free MB " + freeMb());

    Configuration small = helperConf("127.0.0.1:" + port, false);
    fixedStraggler(small, 1, 500, 200, 5);
    Job later = StragglerJob.create(small, "dollymp-yield-to-me");
    assertTrue(later.waitForCompletion(false), "the later job failed");
    assertFalse(big.isComplete(), "the later job should finish while the first job's 90 s maps still run");
    assertTrue(big.waitForCompletion(false), "the job whose clones yielded failed");
    assertEquals(8 * 10, big.getCounters().findCounter("dollymp", "records").getValue(), "records lost or doubled");

    assertTrue(shim.containersPreempted() > preemptedBefore, "the shim preempted no container");
    assertTrue(ServiceQueries.dumpDecisions(service.db).contains("clone_yields"), "no clone_yields in the log");
    String app = ExampleJobs.appIdOf(big);
    Map<String, List<Row>> rows = AttemptRecords.awaitFinal(WORK.resolve("records").resolve(app + ".tsv"), 60_000);
    List<Row> all = rows.values().stream().flatMap(List::stream).toList();
    assertTrue(all.stream().anyMatch(r -> r.isClone() && r.state().equals("KILLED") && !r.container().isEmpty()),
        "no launched clone was killed: " + rows);
    for (List<Row> as : rows.values()) {
      assertEquals(1, as.stream().filter(Row::winner).count(), "one winner per task: " + as);
      assertTrue(launched(as) <= 3, "a yielded clone was replaced by a launched attempt: " + as);
    }
  }

  private static long freeMb() {
    return cluster.getResourceManager().getResourceScheduler().getRootQueueMetrics().getAvailableMB();
  }
}
