package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.ContainerLogs;
import io.dollymp.yarn.testkit.ShimRig;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.applications.distributedshell.ApplicationMaster;
import org.apache.hadoop.yarn.applications.distributedshell.Client;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 30, part 5: Hadoop's DistributedShell, an application with no DollyMP AM helper, runs end to end
 * through a real RM with the shim (3 NodeManagers) and the real decision service. Its client submits it
 * as a user would; the test checks the application SUCCEEDED and that every shell container wrote the
 * expected line, its own container id included, to its stdout.
 */
class DistributedShellIT {
  private static final String NAME = "dollymp-dshell";
  private static final Path WORK = Paths.get("target", "dshell-it").toAbsolutePath();
  private static final int NODES = 3;
  private static final int CONTAINERS = 6;
  private static ShimRig rig;
  private static MiniMRYarnCluster cluster;
  private static DollyMPScheduler shim;
  private static String stagingToDelete;

  @BeforeAll
  static void start() throws Exception {
    rig = ShimRig.start(NAME, WORK, NODES, conf -> { });
    cluster = rig.cluster;
    shim = rig.shim;
  }

  @AfterAll
  static void stop() throws Exception {
    if (stagingToDelete != null) {
      // The client stages the AM jar under the submitter's home directory (file:/// here).
      Configuration conf = new Configuration(cluster.getConfig());
      FileSystem fs = FileSystem.get(conf);
      fs.delete(new org.apache.hadoop.fs.Path(fs.getHomeDirectory(), stagingToDelete), true);
    }
    if (rig != null) {
      rig.close();
    }
  }

  /**
   * The cluster's configuration, and the AM's: DistributedShell's AM reads its configuration from its
   * classpath, so the cluster's yarn-site.xml goes into a directory the client puts on that classpath
   * (yarn.application.classpath, where an operator's HADOOP_CONF_DIR is).
   */
  private static Configuration clientConf() throws Exception {
    Path confDir = Files.createDirectories(WORK.resolve("hadoop-conf"));
    try (OutputStream out = Files.newOutputStream(confDir.resolve("yarn-site.xml"))) {
      cluster.getConfig().writeXml(out);
    }
    Configuration conf = new Configuration(cluster.getConfig());
    List<String> cp = new ArrayList<>(List.of(confDir.toString()));
    cp.addAll(List.of(conf.getStrings(YarnConfiguration.YARN_APPLICATION_CLASSPATH,
        YarnConfiguration.DEFAULT_YARN_CROSS_PLATFORM_APPLICATION_CLASSPATH)));
    conf.setStrings(YarnConfiguration.YARN_APPLICATION_CLASSPATH, cp.toArray(new String[0]));
    return conf;
  }

  @Test
  void distributedShellSucceedsWithEveryContainersOutput() throws Exception {
    String token = UUID.randomUUID().toString().substring(0, 8);
    String appName = "dollymp-dshell-" + token;
    String dsJar = Paths.get(ApplicationMaster.class.getProtectionDomain().getCodeSource().getLocation().toURI())
        .toString();
    Client client = new Client(clientConf());
    assertTrue(client.init(new String[] {
        "--jar", dsJar,
        "--appname", appName,
        "--queue", "default",
        "--num_containers", Integer.toString(CONTAINERS),
        // $CONTAINER_ID is expanded by the container's own shell: each line names the container that ran it.
        "--shell_command", "echo marker-" + token + " $CONTAINER_ID",
        "--master_memory", "512",
        "--master_vcores", "1",
        "--container_memory", "256",
        "--container_vcores", "1",
        "--timeout", "150000"}));
    long started = System.currentTimeMillis();
    boolean succeeded = client.run();

    YarnClient yc = rig.yarn;
    List<ApplicationReport> apps = yc.getApplications().stream()
        .filter(r -> r.getName().equals(appName)).toList();
    assertEquals(1, apps.size(), "applications named " + appName + ": " + apps);
    ApplicationReport report = apps.get(0);
    stagingToDelete = "DistributedShell/" + report.getApplicationId();
    assertTrue(succeeded, "the DistributedShell client reported failure: " + report.getDiagnostics());
    assertEquals(YarnApplicationState.FINISHED, report.getYarnApplicationState(), report.getDiagnostics());
    assertEquals(FinalApplicationStatus.SUCCEEDED, report.getFinalApplicationStatus(), report.getDiagnostics());

    ContainerId amContainer = yc.getApplicationAttemptReport(report.getCurrentApplicationAttemptId())
        .getAMContainerId();
    List<ContainerLogs.Entry> shells = ContainerLogs.of(cluster, NODES, report.getApplicationId()).stream()
        .filter(e -> !e.container().equals(amContainer)).toList();
    assertEquals(CONTAINERS, shells.size(), "shell containers launched: " + shells);
    Map<ContainerId, DollyMPScheduler.Source> sources = shim.containerSources();
    for (ContainerLogs.Entry e : shells) {
      assertEquals("marker-" + token + " " + e.container(), e.read("stdout").trim(),
          e.container() + " on " + e.node() + " wrote this to stdout; stderr: " + e.read("stderr"));
      assertEquals(DollyMPScheduler.Source.SERVICE, sources.get(e.container()),
          e.container() + " was placed by " + sources.get(e.container()));
    }
    assertEquals(SessionState.RUNNING, shim.sessionState());
    System.out.printf("DistributedShell %s: %d containers on %s in %d ms%n", report.getApplicationId(),
        shells.size(), Set.copyOf(shells.stream().map(ContainerLogs.Entry::node).toList()),
        System.currentTimeMillis() - started);
  }
}
