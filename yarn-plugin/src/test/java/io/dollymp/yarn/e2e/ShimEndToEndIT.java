package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.ShimConfig;
import io.dollymp.yarn.scheduler.client.SessionState;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.examples.WordCount;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
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
  private static final Path WORK = Paths.get("target", "e2e").toAbsolutePath();
  private static DecisionServiceProcess service;
  private static MiniMRYarnCluster cluster;
  private static DollyMPScheduler shim;
  private static final Set<String> jobAppIds = new HashSet<>();

  @BeforeAll
  static void startCluster() throws Exception {
    FileUtil.fullyDelete(WORK.toFile());
    service = new DecisionServiceProcess(WORK.resolve("service"), "fcfs");
    int port = service.awaitGrpcPort(60_000);

    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.shutdown();
    Configuration conf = new YarnConfiguration();
    conf.setClass(YarnConfiguration.RM_SCHEDULER, DollyMPScheduler.class, ResourceScheduler.class);
    conf.set(ShimConfig.SERVICE_ADDRESS, "127.0.0.1:" + port);
    conf.setLong(ShimConfig.FALLBACK_AFTER_MS, 3000);
    conf.setLong(ShimConfig.PLAN_MAX_AGE_MS, 3000);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 256);
    conf.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 3072);
    conf.setInt(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 250);
    conf.setInt("yarn.app.mapreduce.am.resource.mb", 512);
    conf.set("yarn.app.mapreduce.am.command-opts", "-Xmx384m");
    conf.setInt("mapreduce.map.memory.mb", 384);
    conf.setInt("mapreduce.reduce.memory.mb", 384);
    conf.set("mapreduce.map.java.opts", "-Xmx256m");
    conf.set("mapreduce.reduce.java.opts", "-Xmx256m");
    conf.setInt("yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms", 250);
    conf.setFloat("yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage", 99.5f);
    conf.set("fs.defaultFS", "file:///");
    cluster = new MiniMRYarnCluster("dollymp-e2e", 2);
    cluster.init(conf);
    cluster.start();
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
      cluster.stop();
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
    Map<String, Integer> expected = writeText(input, 3, 2000, new Random(42));
    Path output = WORK.resolve("wc-out");

    Job wc = Job.getInstance(conf, "dollymp-e2e-wordcount");
    wc.setJarByClass(WordCount.class);
    wc.setMapperClass(WordCount.TokenizerMapper.class);
    wc.setCombinerClass(WordCount.IntSumReducer.class);
    wc.setReducerClass(WordCount.IntSumReducer.class);
    wc.setOutputKeyClass(Text.class);
    wc.setOutputValueClass(IntWritable.class);
    wc.setNumReduceTasks(2);
    FileInputFormat.addInputPath(wc, new org.apache.hadoop.fs.Path(input.toUri()));
    FileOutputFormat.setOutputPath(wc, new org.apache.hadoop.fs.Path(output.toUri()));
    assertTrue(wc.waitForCompletion(true), "wordcount failed");
    jobAppIds.add(appIdOf(wc));
    assertEquals(expected, readCounts(output), "wordcount counts differ from the generated text's");

    SleepJob sleep = new SleepJob();
    sleep.setConf(conf);
    Job sj = sleep.createJob(3, 1, 500, 1, 500, 1);
    sj.setJobName("dollymp-e2e-sleep");
    assertTrue(sj.waitForCompletion(true), "sleep job failed");
    jobAppIds.add(appIdOf(sj));

    Set<ContainerId> ran = containersThatRan(jobAppIds);
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
    // Placements name the node they went to; at least one NodeManager got service placements.
    boolean anyNode = cluster.getResourceManager().getRMContext().getRMNodes().keySet().stream()
        .anyMatch(id -> decisions.contains(id.toString()));
    assertTrue(anyNode, "no placement names a NodeManager of this cluster");
  }

  @Test
  @Order(3)
  void killingTheServiceDoesNotHangTheResourceManager() throws Exception {
    Configuration conf = new Configuration(cluster.getConfig());
    SleepJob sleep = new SleepJob();
    sleep.setConf(conf);
    Job sj = sleep.createJob(4, 1, 3000, 1, 1000, 1);
    sj.setJobName("dollymp-e2e-sleep-during-kill");
    sj.submit();
    // Kill the service while the job is running.
    long waitUntil = System.currentTimeMillis() + 60_000;
    while (sj.mapProgress() <= 0f && System.currentTimeMillis() < waitUntil) {
      Thread.sleep(200);
    }
    service.killHard();
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

  // --------------------------------------------------------------------------------------------

  private static String appIdOf(Job job) {
    return job.getJobID().toString().replace("job_", "application_");
  }

  /** Containers that actually ran, from the NodeManagers' own container log directories. */
  private static Set<ContainerId> containersThatRan(Set<String> appIds) throws IOException {
    Set<ContainerId> out = new HashSet<>();
    Path base = Paths.get("target", "test", "data", "dollymp-e2e").toAbsolutePath();
    try (Stream<Path> walk = Files.walk(base, 5)) {
      walk.filter(Files::isDirectory)
          .filter(p -> p.getFileName().toString().startsWith("container_"))
          .filter(p -> p.getParent() != null && appIds.contains(p.getParent().getFileName().toString()))
          .filter(p -> p.toString().contains("logDir"))
          .forEach(p -> out.add(ContainerId.fromString(p.getFileName().toString())));
    }
    return out;
  }

  private static Map<String, Integer> writeText(Path dir, int files, int wordsPerFile, Random rnd) throws IOException {
    String[] vocab = {"straggler", "clone", "yarn", "dolly", "flowtime", "knapsack", "pareto", "reduce", "map"};
    Map<String, Integer> counts = new HashMap<>();
    Files.createDirectories(dir);
    for (int f = 0; f < files; f++) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < wordsPerFile; i++) {
        String w = vocab[rnd.nextInt(vocab.length)];
        counts.merge(w, 1, Integer::sum);
        sb.append(w).append(i % 12 == 11 ? '\n' : ' ');
      }
      Files.writeString(dir.resolve("part-" + f + ".txt"), sb.toString(), StandardCharsets.UTF_8);
    }
    return counts;
  }

  private static Map<String, Integer> readCounts(Path outDir) throws IOException {
    Map<String, Integer> counts = new HashMap<>();
    FileSystem.getLocal(new Configuration());
    File[] parts = outDir.toFile().listFiles((d, n) -> n.startsWith("part-r-"));
    assertTrue(parts != null && parts.length == 2, "expected 2 reduce outputs");
    for (File part : parts) {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(Files.newInputStream(part.toPath()),
          StandardCharsets.UTF_8))) {
        for (String line = r.readLine(); line != null; line = r.readLine()) {
          String[] kv = line.split("\t");
          counts.put(kv[0], Integer.parseInt(kv[1]));
        }
      }
    }
    return counts;
  }
}
