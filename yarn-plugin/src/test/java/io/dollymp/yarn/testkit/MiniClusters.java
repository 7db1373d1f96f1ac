package io.dollymp.yarn.testkit;

import io.dollymp.yarn.compat.HadoopVersionCheck;
import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.ShimConfig;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.util.VersionInfo;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;

/** Hadoop's in-process MapReduce-on-YARN cluster with the DollyMP shim, sized for a 2-core machine. */
public final class MiniClusters {
  private MiniClusters() {}

  /**
   * JVM flags for the test jobs' AMs and tasks, which live seconds: the client compiler only and the serial
   * collector. The end-to-end tests start hundreds of these JVMs on 2 shared cores, and a JVM loading
   * Hadoop's classes took 0.57 CPU-seconds with these flags against 0.95 without (5 runs each).
   */
  public static final String SHORT_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";

  /**
   * The flags of a MapReduce container JVM: {@link #SHORT_JVM}, and on Hadoop 3.3 JDK 17's --add-opens (this
   * JVM's, the build's jdk17.opens). Hadoop 3.4 and later add those to every container themselves
   * (mapreduce.jvm.add-opens-as-default); 3.3 adds none, and its AM's Guice 4.0 dies on Java 17 without them
   * (java.lang not opened to cglib), as an operator running 3.3 on Java 17 would find.
   */
  public static final String CONTAINER_JVM = "3.3".equals(HadoopVersionCheck.line(VersionInfo.getVersion()))
      ? SHORT_JVM + " " + ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
          .filter(a -> a.startsWith("--add-opens=") || a.startsWith("--add-exports=")).collect(Collectors.joining(" "))
      : SHORT_JVM;

  /** Configuration for a small cluster whose RM uses the shim talking to 127.0.0.1:grpcPort. */
  public static Configuration shimConf(int grpcPort) {
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.shutdown();
    Configuration conf = new YarnConfiguration();
    conf.setClass(YarnConfiguration.RM_SCHEDULER, DollyMPScheduler.class, ResourceScheduler.class);
    conf.set(ShimConfig.SERVICE_ADDRESS, "127.0.0.1:" + grpcPort);
    conf.setLong(ShimConfig.FALLBACK_AFTER_MS, 3000);
    conf.setLong(ShimConfig.PLAN_MAX_AGE_MS, 3000);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 256);
    conf.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 3072);
    conf.setInt(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 250);
    conf.setInt("yarn.app.mapreduce.am.resource.mb", 512);
    conf.set("yarn.app.mapreduce.am.command-opts", "-Xmx384m " + CONTAINER_JVM);
    conf.setInt("mapreduce.map.memory.mb", 384);
    conf.setInt("mapreduce.reduce.memory.mb", 384);
    conf.set("mapreduce.map.java.opts", "-Xmx256m " + CONTAINER_JVM);
    conf.set("mapreduce.reduce.java.opts", "-Xmx256m " + CONTAINER_JVM);
    conf.setInt("yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms", 250);
    conf.setFloat("yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage", 99.5f);
    conf.set("fs.defaultFS", "file:///");
    // A 6 GB test cluster under CapacityScheduler's default AM percent (0.1, from the capacity-scheduler.xml
    // on the test classpath) runs one 512 MB AM at a time; tests that run jobs side by side need more, as an
    // operator of so small a cluster would set. Set in code, it wins over that file, as in CapacityScheduler.
    conf.set("yarn.scheduler.capacity.maximum-am-resource-percent", "0.5");
    return conf;
  }

  /**
   * The RM's node-attribute store in a folder of its own, unless one is set. Its default,
   * file:///tmp/hadoop-yarn-${user}/node-attribute, is one folder for every RM of the user on the machine, and
   * two RMs starting at once race on its mirror file (FileNotFoundException on nodeattribute.mirror.writing
   * and the RM exits), as RMs side by side in make test do.
   */
  public static Configuration ownNodeAttributeStore(Configuration conf, java.nio.file.Path dir) {
    if (conf.get(YarnConfiguration.FS_NODE_ATTRIBUTE_STORE_ROOT_DIR) == null) {
      conf.set(YarnConfiguration.FS_NODE_ATTRIBUTE_STORE_ROOT_DIR, dir.toAbsolutePath().toUri().toString());
    }
    return conf;
  }

  /**
   * Stops {@code cluster}, its NodeManagers side by side first. A NodeManager's stop waits for its applications'
   * clean-up (up to the kill wait, about 6 s, while an application is still there) and then for its log handler's
   * scheduled deletions (10 s); MiniYARNCluster stops them one after another, so a class's clean-up took about
   * 16 s a NodeManager (jstack of ShimEndToEndIT's @AfterAll: ContainerManagerImpl.cleanUpApplicationsOnNMShutDown,
   * then NonAggregatingLogHandler.serviceStop). Stopping a service twice is a no-op, so the cluster's own stop
   * then finds them stopped.
   */
  public static void stop(MiniYARNCluster cluster) {
    List<Thread> stops = new ArrayList<>();
    for (int i = 0; ; i++) {
      NodeManager nm;
      try {
        nm = cluster.getNodeManager(i);
      } catch (ArrayIndexOutOfBoundsException e) {
        break; // MiniYARNCluster has no count of its NodeManagers but this
      }
      if (nm != null) {
        Thread t = new Thread(nm::stop, cluster.getName() + " NodeManager " + i + " stop");
        t.start();
        stops.add(t);
      }
    }
    try {
      for (Thread t : stops) {
        t.join(120_000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the cluster's own stop below still stops what is left
    }
    cluster.stop();
  }

  public static MiniMRYarnCluster start(String name, int nodeManagers, Configuration conf) {
    ownNodeAttributeStore(conf, java.nio.file.Paths.get("target", name + "-node-attribute"));
    MiniMRYarnCluster cluster = new MiniMRYarnCluster(name, nodeManagers);
    cluster.init(conf);
    cluster.start();
    return cluster;
  }

  /** Starts a shim cluster on the service's port and waits until the shim's session is RUNNING. */
  public static MiniMRYarnCluster startWithShim(String name, int nodeManagers, int grpcPort, long timeoutMs)
      throws InterruptedException {
    return startWithShim(name, nodeManagers, shimConf(grpcPort), timeoutMs);
  }

  /** As above, with a configuration from {@link #shimConf} that the caller adjusted. */
  public static MiniMRYarnCluster startWithShim(String name, int nodeManagers, Configuration conf, long timeoutMs)
      throws InterruptedException {
    MiniMRYarnCluster cluster = start(name, nodeManagers, conf);
    DollyMPScheduler shim = (DollyMPScheduler) cluster.getResourceManager().getResourceScheduler();
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (shim.sessionState() != io.dollymp.yarn.scheduler.client.SessionState.RUNNING
        && System.currentTimeMillis() < deadline) {
      Thread.sleep(100);
    }
    return cluster;
  }
}
