package io.dollymp.yarn.testkit;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.client.SessionState;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.exceptions.YarnException;

/**
 * What a framework's end-to-end test runs against: the real decision service (policy dollymp) in a process
 * of its own, a mini cluster whose RM runs the shim on it, every NodeManager registered with the shim, and
 * a YarnClient on the cluster, as a user's tools see it.
 */
public final class ShimRig implements AutoCloseable {
  public final DecisionServiceProcess service;
  public final MiniMRYarnCluster cluster;
  public final DollyMPScheduler shim;
  public final YarnClient yarn;

  private ShimRig(DecisionServiceProcess service, MiniMRYarnCluster cluster, YarnClient yarn) {
    this.service = service;
    this.cluster = cluster;
    this.shim = (DollyMPScheduler) cluster.getResourceManager().getResourceScheduler();
    this.yarn = yarn;
  }

  /**
   * Starts it afresh in {@code work} (emptied first) with {@code nodes} NodeManagers, the configuration from
   * {@link MiniClusters#shimConf} as {@code adjust} leaves it; fails if the shim's session never reaches
   * RUNNING or a NodeManager never registers.
   */
  public static ShimRig start(String name, Path work, int nodes, Consumer<Configuration> adjust)
      throws IOException, InterruptedException {
    FileUtil.fullyDelete(work.toFile());
    int grpcPort;
    try (ServerSocket s = new ServerSocket(0)) {
      grpcPort = s.getLocalPort();
    }
    DecisionServiceProcess service = new DecisionServiceProcess(work.resolve("service"), "dollymp", grpcPort);
    service.awaitGrpcPort(60_000);
    Configuration conf = MiniClusters.shimConf(grpcPort);
    adjust.accept(conf);
    MiniMRYarnCluster cluster = MiniClusters.startWithShim(name, nodes, conf, 30_000);
    YarnClient yarn = YarnClient.createYarnClient();
    yarn.init(new Configuration(cluster.getConfig()));
    yarn.start();
    ShimRig rig = new ShimRig(service, cluster, yarn);
    if (rig.shim.sessionState() != SessionState.RUNNING) {
      rig.close();
      throw new IllegalStateException("shim never reached RUNNING:\n" + service.logText());
    }
    long until = System.currentTimeMillis() + 30_000;
    while (rig.shim.nodes().size() < nodes && System.currentTimeMillis() < until) {
      Thread.sleep(100);
    }
    if (rig.shim.nodes().size() != nodes) {
      rig.close();
      throw new IllegalStateException(rig.shim.nodes().size() + " of " + nodes + " NodeManagers registered");
    }
    return rig;
  }

  /** The application's report once it FINISHED, FAILED or was KILLED, or after {@code timeoutMs}. */
  public ApplicationReport awaitFinished(ApplicationId id, long timeoutMs)
      throws IOException, YarnException, InterruptedException {
    long until = System.currentTimeMillis() + timeoutMs;
    ApplicationReport r = yarn.getApplicationReport(id);
    while (!Set.of(YarnApplicationState.FINISHED, YarnApplicationState.FAILED, YarnApplicationState.KILLED)
        .contains(r.getYarnApplicationState()) && System.currentTimeMillis() < until) {
      Thread.sleep(200);
      r = yarn.getApplicationReport(id);
    }
    return r;
  }

  @Override
  public void close() {
    try {
      yarn.stop();
      MiniClusters.stop(cluster);
    } finally {
      service.close();
    }
  }
}
