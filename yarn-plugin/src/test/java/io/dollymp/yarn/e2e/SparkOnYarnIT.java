package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.ContainerLogs;
import io.dollymp.yarn.testkit.ShimRig;
import io.dollymp.yarn.testkit.SparkEventLog;
import io.dollymp.yarn.testkit.SparkSubmitter;
import io.dollymp.yarn.testkit.SparkSubmitter.DeployMode;
import io.dollymp.yarn.testkit.SparkSubmitter.Run;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 30, part 5: Spark on YARN (3.5) through a real RM with the shim (4 NodeManagers, one mini cluster
 * for every case) and the real decision service, in client and cluster mode, with dynamic allocation
 * off and on. The driver is Spark's own SparkSubmit in a separate JVM on Spark's own jars (target/spark,
 * built by maven-invoker-plugin from src/it/spark-jars: Spark runs on the shaded Hadoop 3.3 client, which
 * must not meet Hadoop 3.4 on this classpath), with the mini cluster's configuration as HADOOP_CONF_DIR,
 * as a user submits. The application's answers are checked where its driver printed them (spark-submit's
 * stdout in client mode, the AM container's in cluster mode); Spark's event log and the NodeManagers'
 * containers show its executors, which with dynamic allocation must be released when idle and allocated
 * anew; and its executors must stay off the nodes named in {@code spark.yarn.exclude.nodes} (the AM's
 * blacklist), as under CapacityScheduler. A PySpark application (src/test/resources/pyspark/sum_words.py)
 * gives the same answers in both deploy modes on the same Spark jars, its Python from PyPI's pyspark of
 * Spark's version ({@code dollymp.pyspark}: the directory {@code make pyspark} installs it to), its tasks run
 * by Python workers in executor containers the decision service placed.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SparkOnYarnIT {
  private static final String NAME = "dollymp-spark";
  private static final Path WORK = Paths.get("target", "spark-it").toAbsolutePath();
  private static final Path SPARK = Paths.get(System.getProperty("dollymp.spark.dir", "target/spark"))
      .toAbsolutePath();
  private static final int NODES = 4;
  /** Executors with dynamic allocation off (spark.executor.instances). */
  private static final int EXECUTORS = 3;
  /** The most executors dynamic allocation may hold at once (spark.dynamicAllocation.maxExecutors). */
  private static final int MAX_EXECUTORS = 2;
  private static final long N = 1_000_000L;
  private static final String SUM = "SUM=" + (N * (N + 1) / 2);
  /** What SumJob's word count must print (see SumJob). */
  private static final String WORDS = "WORDS={clone=1000, dolly=500, spark=500, yarn=1000}";
  private static ShimRig rig;
  private static MiniMRYarnCluster cluster;
  private static DollyMPScheduler shim;
  private static YarnClient yarn;
  private static SparkSubmitter spark;
  /** PyPI's pyspark and py4j, installed with pip --target (make pyspark). */
  private static final Path PYSPARK_PACKAGES = Paths.get(System.getProperty("dollymp.pyspark", "missing"))
      .toAbsolutePath();
  private static final String SUM_JOB = "io.dollymp.it.spark.SumJob";

  @BeforeAll
  static void start() throws Exception {
    assertTrue(Files.isRegularFile(SPARK.resolve("spark-app.jar")) && Files.isDirectory(SPARK.resolve("jars")),
        SPARK + " holds no Spark build: run through `mvn verify` (maven-invoker-plugin builds src/it/spark-jars)");
    // The NodeManagers share one host: node names carry the port, so the exclusion can name 2 of the 4.
    rig = ShimRig.start(NAME, WORK, NODES,
        conf -> conf.setBoolean(YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME, true));
    cluster = rig.cluster;
    shim = rig.shim;
    yarn = rig.yarn;
    // The client's view of the cluster, where spark-submit looks for it (HADOOP_CONF_DIR).
    Path confDir = Files.createDirectories(WORK.resolve("hadoop-conf"));
    for (String site : List.of("core-site.xml", "yarn-site.xml")) {
      try (OutputStream out = Files.newOutputStream(confDir.resolve(site))) {
        cluster.getConfig().writeXml(out);
      }
    }
    spark = new SparkSubmitter(SPARK, WORK, confDir);
  }

  @AfterAll
  static void stop() {
    if (rig != null) {
      rig.close();
    }
  }

  @ParameterizedTest(name = "deploy mode {0}, dynamic allocation {1}")
  @CsvSource({"CLIENT, false", "CLUSTER, false", "CLIENT, true", "CLUSTER, true"})
  @Order(1)
  void sparkJobSucceedsWithCorrectResults(DeployMode mode, boolean dynamic) throws Exception {
    String name = "dollymp-spark-" + mode.flag() + (dynamic ? "-dynamic" : "-static");
    Finished job = dynamic ? submitDynamic(name, mode) : submitStatic(name, mode, List.of());
    SparkEventLog events = SparkEventLog.of(spark.eventLogDir(), job.run.appId(), 30_000);
    long added = events.count(SparkEventLog.EXECUTOR_ADDED);
    if (dynamic) {
      // A container the allocator was still starting when the application stopped never registers.
      assertTrue(added >= 2 && added <= job.executors.size(), added + " executors added, in containers "
          + job.executors + ": " + events);
      // Released while the application still had work to do, then allocated anew for that work.
      assertTrue(job.driverOutput.contains("RELEASED="), job.driverOutput);
      assertFalse(events.removedBeforeLastJob().isEmpty(), "no executor released while idle: " + events);
      for (SparkEventLog.Event e : events.removedBeforeLastJob()) {
        // Spark's reason when the driver gives an executor back (dynamic allocation), not a failure.
        assertEquals("Executor killed by driver.", e.reason(), "not an idle release: " + events);
      }
      assertTrue(events.addedAfterFirstRemoval() >= 1, "no executor added after a release: " + events);
      assertTrue(events.maxLive() <= MAX_EXECUTORS, "more than " + MAX_EXECUTORS + " at once: " + events);
      assertTrue(job.executors.size() > events.removedBeforeLastJob().size(), "containers: " + job.executors);
    } else {
      assertAllExecutors(job.executors);
      assertEquals(EXECUTORS, added, "executors the driver saw: " + events);
      assertEquals(List.of(), events.removedBeforeLastJob(), "an executor left before the last job: " + events);
    }
    System.out.printf("Spark %s (%s mode, dynamic allocation %s): %d executors on %s, %d released while idle,"
        + " in %d ms%n", job.run.appId(), mode.flag(), dynamic, job.executors.size(), nodes(job.executors),
        events.removedBeforeLastJob().size(), job.run.ms());
  }

  @Test
  @Order(2)
  void excludedNodesGetNoExecutor() throws Exception {
    // The first two nodes by name: the ones a first-fit placement tries first.
    List<? extends SchedulerNode> first = shim.nodes().stream()
        .sorted(Comparator.comparing(SchedulerNode::getNodeName)).limit(2).toList();
    Set<NodeId> excludedIds = first.stream().map(SchedulerNode::getNodeID).collect(Collectors.toSet());
    String excluded = first.stream().map(SchedulerNode::getNodeName).collect(Collectors.joining(","));
    Finished job = submitStatic("dollymp-spark-exclude", DeployMode.CLIENT,
        List.of("spark.yarn.exclude.nodes=" + excluded));
    assertAllExecutors(job.executors);
    for (ContainerLogs.Entry e : job.executors) {
      assertTrue(!excludedIds.contains(e.node()), "executor " + e.container() + " ran on excluded node " + e.node()
          + " (excluded: " + excluded + "; executors on " + nodes(job.executors) + ")");
    }
    System.out.printf("Spark %s excluding %s: executors on %s in %d ms%n", job.run.appId(), excluded,
        nodes(job.executors), job.run.ms());
  }

  @ParameterizedTest(name = "PySpark, deploy mode {0}")
  @EnumSource(DeployMode.class)
  @Order(3)
  void pysparkJobSucceedsWithCorrectResults(DeployMode mode) throws Exception {
    SparkSubmitter.PySpark py = pyspark();
    Path app = WORK.resolve("sum_words.py");
    try (InputStream in = SparkOnYarnIT.class.getResourceAsStream("/pyspark/sum_words.py")) {
      assertTrue(in != null, "no pyspark/sum_words.py among the test resources");
      Files.copy(in, app, StandardCopyOption.REPLACE_EXISTING);
    }
    String name = "dollymp-pyspark-" + mode.flag();
    Finished job = submit(mode, staticConf(List.of()), List.of(),
        (conf, args) -> spark.submitPython(name, mode, app, py, conf, args, 300));
    assertAllExecutors(job.executors);
    assertTrue(job.driverOutput.contains("PYSPARK=" + spark.version()), "not pyspark " + spark.version()
        + ":\n" + job.driverOutput);
    // The sum's tasks ran in Python workers, in the executors' containers (placed by the service: submit).
    Matcher m = Pattern.compile("PYTHON_CONTAINERS=(\\S+)").matcher(job.driverOutput);
    assertTrue(m.find(), "no PYTHON_CONTAINERS line:\n" + job.driverOutput);
    Set<ContainerId> executors = job.executors.stream().map(ContainerLogs.Entry::container)
        .collect(Collectors.toSet());
    Set<ContainerId> python = new TreeSet<>();
    for (String c : m.group(1).split(",")) {
      python.add(ContainerId.fromString(c));
    }
    assertTrue(executors.containsAll(python), "Python workers in " + python + ", executors " + executors);
    SparkEventLog events = SparkEventLog.of(spark.eventLogDir(), job.run.appId(), 30_000);
    assertEquals(EXECUTORS, events.count(SparkEventLog.EXECUTOR_ADDED), "executors the driver saw: " + events);
    System.out.printf("PySpark %s (%s mode): %d executors on %s, Python workers in %s, in %d ms%n",
        job.run.appId(), mode.flag(), job.executors.size(), nodes(job.executors), python, job.run.ms());
  }

  /** Python for PySpark: this build's interpreter (dollymp.python) and pyspark of the Spark jars' version. */
  private static SparkSubmitter.PySpark pyspark() throws Exception {
    Path version = PYSPARK_PACKAGES.resolve("pyspark").resolve("version.py");
    assertTrue(Files.isRegularFile(version) && Files.isDirectory(PYSPARK_PACKAGES.resolve("py4j")),
        "no pyspark and py4j in " + PYSPARK_PACKAGES + " (make pyspark installs PyPI's; pass -Ddollymp.pyspark=<dir>)");
    String text = Files.readString(version);
    Matcher v = Pattern.compile("__version__[^=]*=\\s*[\"']([^\"']+)[\"']").matcher(text);
    assertTrue(v.find() && v.group(1).equals(spark.version()), "pyspark in " + PYSPARK_PACKAGES
        + " is not Spark's " + spark.version() + ":\n" + text);
    Path python = Paths.get(System.getProperty("dollymp.python", "python3"));
    return new SparkSubmitter.PySpark(python, PYSPARK_PACKAGES);
  }

  /** The static case's containers besides the AM: exactly EXECUTORS, each a Spark executor. */
  private static void assertAllExecutors(List<ContainerLogs.Entry> containers) throws Exception {
    assertEquals(EXECUTORS, containers.size(), "executor containers: " + containers);
    for (ContainerLogs.Entry e : containers) {
      assertTrue(e.read("stderr").contains("YarnCoarseGrainedExecutorBackend"),
          e.container() + " is no Spark executor:\n" + e.read("stderr"));
    }
  }

  private static Set<String> nodes(List<ContainerLogs.Entry> entries) {
    return entries.stream().map(e -> e.node().toString()).collect(Collectors.toCollection(TreeSet::new));
  }

  /** A Spark application that succeeded: what its driver printed and its executors' containers. */
  private record Finished(Run run, String driverOutput, List<ContainerLogs.Entry> executors) {}

  /** A fixed number of executors, all up before the first task (spark.scheduler.minRegisteredResourcesRatio). */
  private static Finished submitStatic(String name, DeployMode mode, List<String> extraConf) throws Exception {
    return submit(name, mode, staticConf(extraConf), List.of());
  }

  private static List<String> staticConf(List<String> extraConf) {
    List<String> conf = new ArrayList<>(List.of(
        "spark.executor.instances=" + EXECUTORS,
        "spark.scheduler.minRegisteredResourcesRatio=1.0",
        "spark.scheduler.maxRegisteredResourcesWaitingTime=90s"));
    conf.addAll(extraConf);
    return conf;
  }

  /**
   * Dynamic allocation with shuffle tracking (no external shuffle service): none at start, at most
   * MAX_EXECUTORS, released after 2 s idle; SumJob waits up to 60 s between its jobs for the release.
   */
  private static Finished submitDynamic(String name, DeployMode mode) throws Exception {
    return submit(name, mode, List.of(
        "spark.dynamicAllocation.enabled=true",
        "spark.dynamicAllocation.shuffleTracking.enabled=true",
        "spark.dynamicAllocation.minExecutors=0",
        "spark.dynamicAllocation.maxExecutors=" + MAX_EXECUTORS,
        "spark.dynamicAllocation.executorIdleTimeout=2s",
        "spark.dynamicAllocation.schedulerBacklogTimeout=1s"), List.of("60000"));
  }

  private static Finished submit(String name, DeployMode mode, List<String> conf, List<String> extraArgs)
      throws Exception {
    return submit(mode, conf, extraArgs, (c, a) -> spark.submit(name, mode, SUM_JOB, c, a, 300));
  }

  /** One spark-submit of SumJob or its Python twin, given its Spark configuration and arguments. */
  @FunctionalInterface
  private interface Submission {
    Run run(List<String> sparkConf, List<String> args) throws Exception;
  }

  /**
   * Runs SumJob (or sum_words.py) and checks it succeeded in Spark and in YARN with the right answers,
   * read where its driver ran: spark-submit's stdout (client mode) or the AM container's (cluster mode);
   * every executor's container was placed by the decision service.
   */
  private static Finished submit(DeployMode mode, List<String> conf, List<String> extraArgs, Submission submission)
      throws Exception {
    List<String> sparkConf = new ArrayList<>(List.of(
        "spark.yarn.am.memory=512m", // client mode's AM
        "spark.driver.memory=512m", // cluster mode's AM, which is the driver
        "spark.executor.cores=1",
        "spark.executor.memory=512m"));
    sparkConf.addAll(conf);
    List<String> args = new ArrayList<>(List.of(Long.toString(N), "12"));
    args.addAll(extraArgs);
    Run run = submission.run(sparkConf, args);
    assertTrue(run.appId() != null, "no application submitted:\n" + run.describe());
    assertEquals(0, run.exit(), run.describe());
    ApplicationReport report = rig.awaitFinished(run.appId(), 30_000);
    assertEquals(YarnApplicationState.FINISHED, report.getYarnApplicationState(), report.getDiagnostics());
    assertEquals(FinalApplicationStatus.SUCCEEDED, report.getFinalApplicationStatus(), report.getDiagnostics());

    ContainerId am = yarn.getApplicationAttemptReport(report.getCurrentApplicationAttemptId()).getAMContainerId();
    List<ContainerLogs.Entry> executors = new ArrayList<>();
    String amStdout = null;
    for (ContainerLogs.Entry e : ContainerLogs.of(cluster, NODES, run.appId())) {
      if (e.container().equals(am)) {
        amStdout = e.read("stdout");
      } else {
        executors.add(e);
      }
    }
    assertTrue(amStdout != null, "no log of the AM container " + am);
    // Where the driver ran: only there are its answers printed.
    String driverOutput = mode == DeployMode.CLUSTER ? amStdout : run.stdout();
    String elsewhere = mode == DeployMode.CLUSTER ? run.stdout() : amStdout;
    assertTrue(driverOutput.contains(SUM) && driverOutput.contains(WORDS),
        "no answers from the driver (" + mode + " mode):\n" + driverOutput + "\n" + run.describe());
    assertFalse(elsewhere.contains("SUM="), "the driver did not run in " + mode + " mode:\n" + elsewhere);
    Map<ContainerId, DollyMPScheduler.Source> sources = shim.containerSources();
    for (ContainerLogs.Entry e : executors) {
      assertEquals(DollyMPScheduler.Source.SERVICE, sources.get(e.container()),
          e.container() + " was placed by " + sources.get(e.container()));
    }
    assertEquals(SessionState.RUNNING, shim.sessionState());
    return new Finished(run, driverOutput, executors);
  }
}
