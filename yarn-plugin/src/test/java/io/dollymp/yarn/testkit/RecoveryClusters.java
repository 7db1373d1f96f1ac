package io.dollymp.yarn.testkit;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.ShuffleHandler;
import org.apache.hadoop.mapreduce.MRConfig;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.service.Service;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.conf.HAUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.RMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;

/**
 * A MapReduce-capable MiniYARNCluster with the shim and work-preserving RM recovery: one RM (to restart)
 * or an active/standby pair (manual failover, no embedded elector). MiniMRYarnCluster has a single RM and
 * its NodeManagers call the first RM object in-process, so they would never see a restarted RM: here the
 * NodeManagers and the AMs reach the RM over RPC on fixed ports (as Hadoop's own failover tests do), and the
 * state store is a FileSystemRMStateStore that a new RM instance (or the standby) reads back.
 */
public final class RecoveryClusters {
  private RecoveryClusters() {}

  /** The shim's configuration (MiniClusters.shimConf) plus MapReduce, fixed RPC ports and recovery. */
  public static Configuration conf(int grpcPort, Path work, int resourceManagers) throws IOException {
    Configuration conf = MiniClusters.shimConf(grpcPort);
    // What MiniMRYarnCluster would set: MapReduce on YARN with the shuffle service on every NodeManager.
    Path staging = Files.createDirectories(work.resolve("staging"));
    conf.set(MRConfig.FRAMEWORK_NAME, MRConfig.YARN_FRAMEWORK_NAME);
    conf.set(MRJobConfig.MR_AM_STAGING_DIR, staging.toString());
    conf.set("fs.permissions.umask-mode", "000");
    conf.setStrings(YarnConfiguration.NM_AUX_SERVICES, ShuffleHandler.MAPREDUCE_SHUFFLE_SERVICEID);
    conf.setClass(String.format(YarnConfiguration.NM_AUX_SERVICE_FMT, ShuffleHandler.MAPREDUCE_SHUFFLE_SERVICEID),
        ShuffleHandler.class, Service.class);
    conf.setInt(ShuffleHandler.SHUFFLE_PORT_CONFIG_KEY, 0);
    conf.setBoolean(MRJobConfig.JOB_UBERTASK_ENABLE, false);
    // Work-preserving recovery from a store that outlives the RM object.
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, true);
    conf.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, 2000);
    conf.setClass(YarnConfiguration.RM_STORE, FileSystemRMStateStore.class, RMStateStore.class);
    conf.set(YarnConfiguration.FS_RM_STATE_STORE_URI, work.resolve("rm-state").toUri().toString());
    // NodeManagers and AMs over RPC, retrying quickly while the RM is away.
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_USE_RPC, true);
    conf.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, 250);
    conf.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_MAX_WAIT_MS, 120_000);
    conf.setLong(YarnConfiguration.NM_RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, 250);
    conf.setLong(YarnConfiguration.NM_RESOURCEMANAGER_CONNECT_MAX_WAIT_MS, 120_000);
    conf.setLong(YarnConfiguration.CLIENT_FAILOVER_SLEEPTIME_BASE_MS, 100);
    conf.setLong(YarnConfiguration.CLIENT_FAILOVER_SLEEPTIME_MAX_MS, 1000);
    String host = MiniYARNCluster.getHostname();
    if (resourceManagers == 1) {
      for (String key : YarnConfiguration.getServiceAddressConfKeys(conf)) {
        conf.set(key, host + ":" + freePort());
      }
    } else {
      StringBuilder ids = new StringBuilder();
      for (int i = 0; i < resourceManagers; i++) {
        ids.append(i == 0 ? "" : ",").append("rm").append(i);
      }
      conf.setBoolean(YarnConfiguration.RM_HA_ENABLED, true);
      conf.set(YarnConfiguration.RM_HA_IDS, ids.toString());
      conf.set(YarnConfiguration.RM_CLUSTER_ID, "dollymp-ha");
      conf.setBoolean(YarnConfiguration.AUTO_FAILOVER_ENABLED, false);
      for (int i = 0; i < resourceManagers; i++) {
        for (String key : YarnConfiguration.getServiceAddressConfKeys(conf)) {
          conf.set(HAUtil.addSuffix(key, "rm" + i), host + ":" + freePort());
        }
      }
    }
    return conf;
  }

  public static MiniYARNCluster start(String name, int resourceManagers, int nodeManagers, Configuration conf) {
    MiniClusters.ownNodeAttributeStore(conf, java.nio.file.Paths.get("target", name + "-node-attribute"));
    MiniYARNCluster cluster = new MiniYARNCluster(name, resourceManagers, nodeManagers, 1, 1);
    cluster.init(conf);
    cluster.start();
    return cluster;
  }

  public static DollyMPScheduler shim(ResourceManager rm) {
    return (DollyMPScheduler) rm.getResourceScheduler();
  }

  /** The containers of {@code app} running now (launched and reported by their NodeManager, not just allocated). */
  public static Set<ContainerId> running(DollyMPScheduler shim, ApplicationId app) {
    Set<ContainerId> out = new TreeSet<>();
    for (SchedulerNode n : shim.nodes()) {
      for (RMContainer c : n.getCopiedListOfRunningContainers()) {
        if (c.getApplicationAttemptId().getApplicationId().equals(app) && c.getState() == RMContainerState.RUNNING) {
          out.add(c.getContainerId());
        }
      }
    }
    return out;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
