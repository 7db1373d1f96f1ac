package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.ShimAppAttempt;
import io.dollymp.yarn.scheduler.ShimConfig;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.scheduler.queue.PreemptionKeys;
import io.dollymp.yarn.scheduler.queue.QueueLoader;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import io.dollymp.yarn.testkit.MiniClusters;
import io.dollymp.yarn.testkit.ServiceQueries;
import io.dollymp.yarn.testkit.UnmanagedAm;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Guaranteed shares under contention through a real RM with the shim and the real decision service:
 * queues a and b are guaranteed 50% each. Queue a holds the whole cluster (b's idle share lent to it)
 * and asks for more, b asks for its share; when half the cluster frees up, it goes to b (below its
 * guarantee, with demand) and not to a's earlier ask, within one NodeManager heartbeat interval. And each
 * queue's maximum-am-resource-percent bounds its ApplicationMasters.
 * Timed: a grant is asserted within one heartbeat interval (plus 500 ms): failsafe runs it after the other
 * end-to-end classes, with nothing beside it (tag "alone").
 */
@Tag("alone")
class QueueSharesIT {
  private static final Path WORK = Paths.get("target", "queue-shares-it").toAbsolutePath();
  private static final Resource SLOT = Resource.newInstance(512, 1);
  private static final int HEARTBEAT_MS = 1000; // YARN's default NodeManager heartbeat interval

  @Test
  void aQueueBelowItsGuaranteeGetsFreedRoomWithinOneHeartbeatInterval() throws Exception {
    // one user holds all of a: as under CapacityScheduler, borrowing past the guarantee needs a factor > 1
    try (Rig rig = Rig.start("dollymp-queue-shares", c -> c.setInt(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS,
        HEARTBEAT_MS), "a.user-limit-factor", "2")) {
      DollyMPScheduler shim = rig.shim;
      int slots = (int) (shim.getClusterResource().getMemorySize() / SLOT.getMemorySize()); // 12
      int half = slots / 2;
      Configuration client = new Configuration(rig.cluster.getConfig());
      try (UnmanagedAm a1 = UnmanagedAm.start(client, "a-first", "a", 60_000);
          UnmanagedAm a2 = UnmanagedAm.start(client, "a-second", "a", 60_000);
          UnmanagedAm b = UnmanagedAm.start(client, "b", "b", 60_000)) {
        a1.request(half, SLOT);
        assertEquals(half, a1.await(half, 60_000).size());
        a2.request(half, SLOT);
        assertEquals(half, a2.await(half, 60_000).size(), "b is idle: its share is lent to a");
        // a asks for a little more, first; then b asks for more than its guarantee. First come first
        // served, or shortest job first, would serve a's small ask from the freed room; the shares give b
        // exactly its guarantee and a nothing.
        a2.request(2, SLOT);
        a2.await(2, 600);
        b.request(2 * half, SLOT);
        b.await(2 * half, 600);
        assertEquals(0, live(shim, b.appId), "the cluster is full");
        long t0 = System.currentTimeMillis();
        a1.releaseAll();
        long deadline = t0 + 10_000;
        while (live(shim, b.appId) < half && System.currentTimeMillis() < deadline) {
          Thread.sleep(10);
        }
        long elapsed = System.currentTimeMillis() - t0;
        Thread.sleep(2 * HEARTBEAT_MS); // and nothing more lands afterwards
        assertEquals(half, live(shim, b.appId), "b's containers at the RM after a's release");
        assertEquals(half, live(shim, a2.appId), "a, above its guarantee, got none of the freed room");
        System.out.println("QueueSharesIT: b got its guaranteed " + half + " containers " + elapsed
            + " ms after the room freed (NodeManager heartbeat " + HEARTBEAT_MS + " ms)");
        // One heartbeat interval for every node to report after the plan, plus the service's round (one tick).
        assertTrue(elapsed <= HEARTBEAT_MS + 500, "b waited " + elapsed + " ms");
      }
    }
  }

  /**
   * Queue a's ApplicationMasters may hold 10% of the cluster (room for one 512 MB AM of the 6 GB), queue b's
   * all of it. Two applications submitted to each: both of b's AMs start, one of a's waits while the other
   * runs, though the cluster has room for it, and the service's log says why. The AM containers run
   * {@code sleep}, so the RM sees real AM containers without any AM registering.
   */
  @Test
  void aQueuesApplicationMastersStayWithinItsAmResourcePercent() throws Exception {
    try (Rig rig = Rig.start("dollymp-queue-am", c -> c.unset("yarn.scheduler.capacity.maximum-am-resource-percent"),
        "a.maximum-am-resource-percent", "0.1", "b.maximum-am-resource-percent", "1.0")) {
      DollyMPScheduler shim = rig.shim;
      YarnClient yc = YarnClient.createYarnClient();
      try {
        yc.init(new Configuration(rig.cluster.getConfig()));
        yc.start();
        ApplicationId a1 = submitSleepingAm(yc, "a");
        ApplicationId b1 = submitSleepingAm(yc, "b");
        long until = System.currentTimeMillis() + 60_000;
        while ((live(shim, a1) < 1 || live(shim, b1) < 1) && System.currentTimeMillis() < until) {
          Thread.sleep(100);
        }
        assertEquals(1, live(shim, a1), "a's first AM: a queue running no AM may always start one");
        ApplicationId a2 = submitSleepingAm(yc, "a");
        ApplicationId b2 = submitSleepingAm(yc, "b");
        until = System.currentTimeMillis() + 60_000;
        while (live(shim, b2) < 1 && System.currentTimeMillis() < until) {
          Thread.sleep(100);
        }
        assertEquals(1, live(shim, b2), "b's second AM (b's AMs may hold the whole cluster)");
        Thread.sleep(2 * HEARTBEAT_MS); // a's second AM had every chance b's had
        assertEquals(1, live(shim, a1), "a's first AM still runs");
        assertEquals(0, live(shim, a2), "a's second AM would put a's AMs above 10% of the cluster");
        String decisions = ServiceQueries.dumpDecisions(rig.service.db);
        assertTrue(decisions.contains("queue_am_limit") && decisions.contains(a2.toString()),
            "the service's log names the AM limit for " + a2 + ":\n" + decisions);
        yc.killApplication(a1);
        until = System.currentTimeMillis() + 60_000;
        while (live(shim, a2) < 1 && System.currentTimeMillis() < until) {
          Thread.sleep(100);
        }
        assertEquals(1, live(shim, a2), "a's second AM starts once the first has gone");
        for (ApplicationId id : new ApplicationId[] {a2, b1, b2}) {
          yc.killApplication(id);
        }
      } finally {
        yc.stop();
      }
    }
  }

  /**
   * CapacityScheduler's preemption monitor turned on (its keys, as an operator migrating has them, wait 1 s):
   * the RM starts (Hadoop's own policy would refuse this scheduler), queue a holds the whole cluster with
   * originals, b asks for its guarantee. Nothing of a's is preempted before the wait; then a's newest originals
   * are, with YARN's PREEMPTED exit status, until b holds its guarantee and a is back at its own.
   */
  @Test
  void withPreemptionOnAQueueTakesItsGuaranteeFromAnotherQueuesOriginals() throws Exception {
    Consumer<Configuration> monitor = c -> {
      c.setBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS, true);
      c.setLong(PreemptionKeys.MAX_WAIT, 1000);
    };
    try (Rig rig = Rig.start("dollymp-queue-preempt", monitor, "a.user-limit-factor", "2")) {
      DollyMPScheduler shim = rig.shim;
      DecisionServiceProcess service = rig.service;
      int slots = (int) (shim.getClusterResource().getMemorySize() / SLOT.getMemorySize()); // 12
      int half = slots / 2;
      Configuration client = new Configuration(rig.cluster.getConfig());
      try (UnmanagedAm a = UnmanagedAm.start(client, "a-all", "a", 60_000);
          UnmanagedAm b = UnmanagedAm.start(client, "b", "b", 60_000)) {
        a.request(slots, SLOT);
        assertEquals(slots, a.await(slots, 60_000).size(), "b is idle: its share is lent to a");
        long t0 = System.currentTimeMillis();
        b.request(half, SLOT);
        b.await(half, 400);
        assertEquals(slots, live(shim, a.appId), "nothing preempted before the 1 s wait");
        List<Container> got = b.await(half, 30_000);
        long elapsed = System.currentTimeMillis() - t0;
        assertEquals(half, got.size(), "b's guarantee, taken from a's originals:\n" + service.logText());
        Thread.sleep(1000); // and no more than owed
        assertEquals(half, live(shim, a.appId), "a keeps its own guarantee");
        List<ContainerStatus> gone = a.heartbeatCompleted();
        assertEquals(half, gone.size(), "a's preempted containers: " + gone);
        for (ContainerStatus st : gone) {
          assertEquals(ContainerExitStatus.PREEMPTED, st.getExitStatus(), st.toString());
        }
        String decisions = ServiceQueries.dumpDecisions(service.db);
        assertTrue(decisions.contains("queue_reclaim_original"), "the log names the reclaim:\n" + decisions);
        System.out.println("QueueSharesIT: b got its guarantee of " + half + " from a's originals " + elapsed
            + " ms after asking (wait 1000 ms)");
      }
    }
  }

  /**
   * With no decision service at all the shim's fallback policy schedules, and still keeps queue a (maximum 50%)
   * at its maximum and the one user of queue b (user-limit-factor 0.5 of its 50%) at a quarter of the cluster,
   * though both ask for the whole of it and the cluster has room.
   */
  @Test
  void withTheServiceDownTheFallbackKeepsQueuesAtTheirMaximumAndUsersAtTheirLimit() throws Exception {
    Path queues = queueFile("a.maximum-capacity", "50", "b.user-limit-factor", "0.5");
    int nobody;
    try (ServerSocket s = new ServerSocket(0)) {
      nobody = s.getLocalPort(); // closed again: nothing listens there
    }
    Configuration conf = MiniClusters.shimConf(nobody);
    conf.set(QueueLoader.QUEUES_FILE, queues.toString());
    MiniMRYarnCluster cluster = MiniClusters.start("dollymp-queue-fallback", 2, conf);
    try {
      DollyMPScheduler shim = (DollyMPScheduler) cluster.getResourceManager().getResourceScheduler();
      long until = System.currentTimeMillis() + 30_000;
      while (shim.nodes().size() < 2 && System.currentTimeMillis() < until) {
        Thread.sleep(100);
      }
      int slots = (int) (shim.getClusterResource().getMemorySize() / SLOT.getMemorySize()); // 12
      Configuration client = new Configuration(cluster.getConfig());
      try (UnmanagedAm a = UnmanagedAm.start(client, "a-all", "a", 60_000);
          UnmanagedAm b = UnmanagedAm.start(client, "b-all", "b", 60_000)) {
        a.request(slots, SLOT);
        b.request(slots, SLOT);
        a.await(slots, 8000); // the shim turns to its fallback after 3 s without a service
        b.await(slots, 2000);
        assertTrue(shim.fallbackContainers() > 0, "the fallback placed them");
        assertEquals(slots / 2, live(shim, a.appId), "queue a at its maximum capacity, 50%");
        assertEquals(slots / 4, live(shim, b.appId), "b's user at 0.5 x 50% of the cluster");
      }
    } finally {
      MiniClusters.stop(cluster);
    }
  }

  /**
   * The decision service and a two-NodeManager cluster whose shim reads a queue file: root -> a (50%), b (50%),
   * plus {@code queueKeys} under root. Only the service places containers: on a loaded machine a slow round must
   * not hand the cluster to the fallback policy (which knows no shares) and confound what is measured.
   */
  private static final class Rig implements AutoCloseable {
    final DecisionServiceProcess service;
    final MiniMRYarnCluster cluster;
    final DollyMPScheduler shim;

    private Rig(DecisionServiceProcess service, MiniMRYarnCluster cluster) {
      this.service = service;
      this.cluster = cluster;
      this.shim = (DollyMPScheduler) cluster.getResourceManager().getResourceScheduler();
    }

    static Rig start(String name, Consumer<Configuration> adjust, String... queueKeys) throws Exception {
      Path queues = queueFile(queueKeys);
      int grpcPort;
      try (ServerSocket s = new ServerSocket(0)) {
        grpcPort = s.getLocalPort();
      }
      DecisionServiceProcess service = new DecisionServiceProcess(WORK.resolve("service"), "dollymp", grpcPort);
      service.awaitGrpcPort(60_000);
      Configuration conf = MiniClusters.shimConf(grpcPort);
      conf.set(QueueLoader.QUEUES_FILE, queues.toString());
      conf.set(ShimConfig.FALLBACK_POLICY, "none");
      conf.setLong(ShimConfig.PLAN_MAX_AGE_MS, 30_000);
      adjust.accept(conf);
      Rig rig = new Rig(service, MiniClusters.startWithShim(name, 2, conf, 30_000));
      assertEquals(SessionState.RUNNING, rig.shim.sessionState(), "shim never reached RUNNING:\n" + service.logText());
      long until = System.currentTimeMillis() + 30_000;
      while (rig.shim.nodes().size() < 2 && System.currentTimeMillis() < until) {
        Thread.sleep(100);
      }
      return rig;
    }

    @Override
    public void close() {
      try {
        MiniClusters.stop(cluster);
      } finally {
        service.close();
      }
    }
  }

  /** A fresh work directory with a queue file: root -> a (50%), b (50%), plus {@code extra} keys under root. */
  private static Path queueFile(String... extra) throws Exception {
    FileUtil.fullyDelete(WORK.toFile());
    Files.createDirectories(WORK);
    String cs = "yarn.scheduler.capacity.root.";
    StringBuilder xml = new StringBuilder("<?xml version=\"1.0\"?>\n<configuration>\n");
    String[] kv = {"queues", "a,b", "a.capacity", "50", "b.capacity", "50"};
    for (String[] pairs : new String[][] {kv, extra}) {
      for (int i = 0; i < pairs.length; i += 2) {
        xml.append("<property><name>").append(cs).append(pairs[i]).append("</name><value>").append(pairs[i + 1])
            .append("</value></property>\n");
      }
    }
    Path queues = WORK.resolve("capacity-scheduler.xml");
    Files.write(queues, xml.append("</configuration>\n").toString().getBytes(StandardCharsets.UTF_8));
    return queues;
  }

  /** An application whose AM container runs {@code sleep} for a minute: an AM container that never registers. */
  private static ApplicationId submitSleepingAm(YarnClient yc, String queue) throws Exception {
    ApplicationSubmissionContext ctx = yc.createApplication().getApplicationSubmissionContext();
    ctx.setApplicationName("sleeping-am-" + queue);
    ctx.setQueue(queue);
    ctx.setMaxAppAttempts(1);
    ctx.setResource(SLOT);
    ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(null, null, List.of("sleep 60"), null, null, null));
    yc.submitApplication(ctx);
    return ctx.getApplicationId();
  }

  private static int live(DollyMPScheduler shim, ApplicationId appId) {
    SchedulerApplication<ShimAppAttempt> app = shim.getSchedulerApplications().get(appId);
    return app == null || app.getCurrentAppAttempt() == null ? 0 : app.getCurrentAppAttempt().getLiveContainers().size();
  }
}
