package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.ContainerLogs;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import io.dollymp.yarn.testkit.MiniClusters;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.net.ServerSocket;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.api.records.ApplicationId;
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

/**
 * Issue 30, part 5: Spark on YARN (3.5, client mode) through a real RM with the shim (4 NodeManagers) and
 * the real decision service. The driver is Spark's own SparkSubmit in a separate JVM on Spark's own jars
 * (target/spark, built by maven-invoker-plugin from src/it/spark-jars: Spark runs on the shaded Hadoop
 * 3.3 client, which must not meet Hadoop 3.4 on this classpath), with the mini cluster's configuration as
 * HADOOP_CONF_DIR, as a user submits. The application's answers are checked, and its executors must stay
 * off the nodes named in {@code spark.yarn.exclude.nodes} (the AM's blacklist), as under CapacityScheduler.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SparkOnYarnIT {
  private static final String NAME = "dollymp-spark";
  private static final Path WORK = Paths.get("target", "spark-it").toAbsolutePath();
  private static final Path SPARK = Paths.get(System.getProperty("dollymp.spark.dir", "target/spark"))
      .toAbsolutePath();
  private static final Pattern SUBMITTED = Pattern.compile("Submitted application (application_\\d+_\\d+)");
  private static final int NODES = 4;
  private static final int EXECUTORS = 3;
  private static final long N = 1_000_000L;
  private static final String SUM = "SUM=" + (N * (N + 1) / 2);
  /** What SumJob's word count must print (see SumJob). */
  private static final String WORDS = "WORDS={clone=1000, dolly=500, spark=500, yarn=1000}";
  private static DecisionServiceProcess service;
  private static MiniMRYarnCluster cluster;
  private static DollyMPScheduler shim;
  private static Path confDir;
  private static YarnClient yarn;

  @BeforeAll
  static void start() throws Exception {
    assertTrue(Files.isRegularFile(SPARK.resolve("spark-app.jar")) && Files.isDirectory(SPARK.resolve("jars")),
        SPARK + " holds no Spark build: run through `mvn verify` (maven-invoker-plugin builds src/it/spark-jars)");
    FileUtil.fullyDelete(WORK.toFile());
    int grpcPort;
    try (ServerSocket s = new ServerSocket(0)) {
      grpcPort = s.getLocalPort();
    }
    service = new DecisionServiceProcess(WORK.resolve("service"), "dollymp", grpcPort);
    service.awaitGrpcPort(60_000);
    Configuration conf = MiniClusters.shimConf(grpcPort);
    // The NodeManagers share one host: node names carry the port, so the exclusion can name 2 of the 4.
    conf.setBoolean(YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME, true);
    cluster = MiniClusters.startWithShim(NAME, NODES, conf, 30_000);
    shim = (DollyMPScheduler) cluster.getResourceManager().getResourceScheduler();
    assertEquals(SessionState.RUNNING, shim.sessionState(), "shim never reached RUNNING:\n" + service.logText());
    long until = System.currentTimeMillis() + 30_000;
    while (shim.nodes().size() < NODES && System.currentTimeMillis() < until) {
      Thread.sleep(100);
    }
    assertEquals(NODES, shim.nodes().size());
    // The client's view of the cluster, where spark-submit looks for it (HADOOP_CONF_DIR).
    confDir = Files.createDirectories(WORK.resolve("hadoop-conf"));
    for (String site : List.of("core-site.xml", "yarn-site.xml")) {
      try (OutputStream out = Files.newOutputStream(confDir.resolve(site))) {
        cluster.getConfig().writeXml(out);
      }
    }
    yarn = YarnClient.createYarnClient();
    yarn.init(new Configuration(cluster.getConfig()));
    yarn.start();
  }

  @AfterAll
  static void stop() throws Exception {
    if (yarn != null) {
      yarn.stop();
    }
    if (cluster != null) {
      cluster.stop();
    }
    if (service != null) {
      service.close();
    }
  }

  @Test
  @Order(1)
  void sparkJobSucceedsWithCorrectResults() throws Exception {
    Run run = submit("dollymp-spark-sum", List.of());
    List<ContainerLogs.Entry> executors = assertSucceeded(run);
    System.out.printf("Spark %s: executors on %s in %d ms%n", run.appId, nodes(executors), run.ms);
  }

  @Test
  @Order(2)
  void excludedNodesGetNoExecutor() throws Exception {
    // The first two nodes by name: the ones a first-fit placement tries first.
    List<? extends SchedulerNode> first = shim.nodes().stream()
        .sorted(Comparator.comparing(SchedulerNode::getNodeName)).limit(2).toList();
    Set<NodeId> excludedIds = first.stream().map(SchedulerNode::getNodeID).collect(Collectors.toSet());
    String excluded = first.stream().map(SchedulerNode::getNodeName).collect(Collectors.joining(","));
    Run run = submit("dollymp-spark-exclude", List.of("spark.yarn.exclude.nodes=" + excluded));
    List<ContainerLogs.Entry> executors = assertSucceeded(run);
    for (ContainerLogs.Entry e : executors) {
      assertTrue(!excludedIds.contains(e.node()), "executor " + e.container() + " ran on excluded node " + e.node()
          + " (excluded: " + excluded + "; executors on " + nodes(executors) + ")");
    }
    System.out.printf("Spark %s excluding %s: executors on %s in %d ms%n", run.appId, excluded, nodes(executors),
        run.ms);
  }

  private static Set<String> nodes(List<ContainerLogs.Entry> entries) {
    return entries.stream().map(e -> e.node().toString()).collect(Collectors.toCollection(TreeSet::new));
  }

  /** A finished spark-submit: its exit code, stdout, stderr and the YARN application it submitted. */
  private record Run(int exit, String stdout, String stderr, ApplicationId appId, long ms) {
    String describe() {
      return "spark-submit exited " + exit + "\n--- stdout\n" + stdout + "\n--- stderr (tail)\n"
          + stderr.substring(Math.max(0, stderr.length() - 8000));
    }
  }

  /** The job succeeded in Spark and in YARN with the right answers; returns its executors' containers. */
  private static List<ContainerLogs.Entry> assertSucceeded(Run run) throws Exception {
    assertTrue(run.appId != null, "no application submitted:\n" + run.describe());
    assertEquals(0, run.exit, run.describe());
    assertTrue(run.stdout.contains(SUM), run.describe());
    assertTrue(run.stdout.contains(WORDS), run.describe());
    ApplicationReport report = awaitFinished(run.appId, 30_000);
    assertEquals(YarnApplicationState.FINISHED, report.getYarnApplicationState(), report.getDiagnostics());
    assertEquals(FinalApplicationStatus.SUCCEEDED, report.getFinalApplicationStatus(), report.getDiagnostics());

    ContainerId am = yarn.getApplicationAttemptReport(report.getCurrentApplicationAttemptId()).getAMContainerId();
    List<ContainerLogs.Entry> executors = new ArrayList<>();
    for (ContainerLogs.Entry e : ContainerLogs.of(cluster, NODES, run.appId)) {
      if (!e.container().equals(am)) {
        assertTrue(e.read("stderr").contains("YarnCoarseGrainedExecutorBackend"),
            e.container() + " is no Spark executor:\n" + e.read("stderr"));
        executors.add(e);
      }
    }
    assertEquals(EXECUTORS, executors.size(), "executor containers: " + executors + "\n" + run.describe());
    Map<ContainerId, DollyMPScheduler.Source> sources = shim.containerSources();
    for (ContainerLogs.Entry e : executors) {
      assertEquals(DollyMPScheduler.Source.SERVICE, sources.get(e.container()),
          e.container() + " was placed by " + sources.get(e.container()));
    }
    assertEquals(SessionState.RUNNING, shim.sessionState());
    return executors;
  }

  private static ApplicationReport awaitFinished(ApplicationId id, long timeoutMs) throws Exception {
    long until = System.currentTimeMillis() + timeoutMs;
    ApplicationReport r = yarn.getApplicationReport(id);
    while (!Set.of(YarnApplicationState.FINISHED, YarnApplicationState.FAILED, YarnApplicationState.KILLED)
        .contains(r.getYarnApplicationState()) && System.currentTimeMillis() < until) {
      Thread.sleep(200);
      r = yarn.getApplicationReport(id);
    }
    return r;
  }

  /** Runs SumJob with spark-submit in client mode, in its own JVM, and waits for it (up to 150 s). */
  private static Run submit(String name, List<String> extraConf) throws Exception {
    Path jars = SPARK.resolve("jars");
    Path out = WORK.resolve(name + ".out");
    Path err = WORK.resolve(name + ".err");
    List<String> cmd = new ArrayList<>();
    cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(javaModuleOptions(jars)); // what bin/spark-submit gives the driver; Spark adds them to its AM and executors
    // As bin/spark-submit builds it: the configuration directory, then Spark's jars.
    String classpath = confDir + File.pathSeparator + jars + File.separator + "*";
    cmd.addAll(List.of("-Xmx768m", "-cp", classpath, "org.apache.spark.deploy.SparkSubmit",
        "--master", "yarn", "--deploy-mode", "client", "--name", name,
        "--class", "io.dollymp.it.spark.SumJob"));
    List<String> sparkConf = new ArrayList<>(List.of(
        // Spark's jars are already on every node (one host): no upload, used in place.
        "spark.yarn.jars=local:" + jars + File.separator + "*",
        "spark.yarn.populateHadoopClasspath=false",
        "spark.yarn.stagingDir=" + WORK.resolve("staging").toUri(),
        "spark.yarn.maxAppAttempts=1",
        "spark.yarn.am.memory=512m",
        "spark.executor.instances=" + EXECUTORS,
        "spark.executor.cores=1",
        "spark.executor.memory=512m",
        "spark.driver.host=127.0.0.1",
        "spark.driver.bindAddress=127.0.0.1",
        "spark.ui.enabled=false",
        // Tasks start once every executor is up, so all of them are placed before the job runs.
        "spark.scheduler.minRegisteredResourcesRatio=1.0",
        "spark.scheduler.maxRegisteredResourcesWaitingTime=90s"));
    sparkConf.addAll(extraConf);
    for (String c : sparkConf) {
      cmd.add("--conf");
      cmd.add(c);
    }
    cmd.addAll(List.of(SPARK.resolve("spark-app.jar").toString(), Long.toString(N), "12"));
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(WORK.toFile())
        .redirectOutput(out.toFile()).redirectError(err.toFile());
    Map<String, String> env = pb.environment();
    env.put("HADOOP_CONF_DIR", confDir.toString());
    env.put("YARN_CONF_DIR", confDir.toString());
    env.put("SPARK_CONF_DIR", Files.createDirectories(WORK.resolve("spark-conf")).toString());
    env.remove("SPARK_HOME");
    long t0 = System.currentTimeMillis();
    Process p = pb.start();
    if (!p.waitFor(150, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      p.waitFor();
    }
    long ms = System.currentTimeMillis() - t0;
    String stdout = Files.readString(out, StandardCharsets.UTF_8);
    String stderr = Files.readString(err, StandardCharsets.UTF_8);
    Matcher m = SUBMITTED.matcher(stderr);
    ApplicationId appId = m.find() ? ApplicationId.fromString(m.group(1)) : null;
    return new Run(p.exitValue(), stdout, stderr, appId, ms);
  }

  /** Spark's own JVM flags for Java 17 (spark-launcher's JavaModuleOptions), read from the Spark build. */
  private static List<String> javaModuleOptions(Path jars) throws IOException, ReflectiveOperationException {
    Path launcher;
    try (Stream<Path> s = Files.list(jars)) {
      launcher = s.filter(p -> p.getFileName().toString().startsWith("spark-launcher_")).findFirst()
          .orElseThrow(() -> new IOException("no spark-launcher jar in " + jars));
    }
    try (URLClassLoader loader = new URLClassLoader(new URL[] {launcher.toUri().toURL()}, null)) {
      Method m = loader.loadClass("org.apache.spark.launcher.JavaModuleOptions").getMethod("defaultModuleOptions");
      return List.of(((String) m.invoke(null)).trim().split("\\s+"));
    }
  }
}
