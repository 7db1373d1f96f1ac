package io.dollymp.yarn.bench;

import io.dollymp.yarn.scheduler.ShimConfig;
import io.dollymp.yarn.sls.SlsJobRecords;
import io.dollymp.yarn.testkit.MiniClusters;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.appmaster.DollyMPAMSimulator;
import org.apache.hadoop.yarn.sls.conf.SLSConfiguration;
import org.apache.hadoop.yarn.sls.scheduler.SLSCapacityScheduler;
import org.apache.hadoop.yarn.sls.scheduler.SLSDollyMPScheduler;
import org.apache.hadoop.yarn.sls.scheduler.SLSFairScheduler;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerWrapper;
import org.apache.hadoop.yarn.sls.scheduler.SlsTimers;

/**
 * One SLS run of a Rumen trace under one scheduler (CapacityScheduler, FairScheduler or the DollyMP shim),
 * every job's AM simulated by {@link DollyMPAMSimulator}; writes what it measured as one JSON file and
 * exits. One scheduler per process: SLS and the RM keep static state (metrics, queue metrics).
 *
 * <p>Arguments ({@code --key value}): scheduler (capacity|fair|dollymp), trace, nodes (SLS node file), out
 * (directory), jobs (how many to wait for), service (host:port, dollymp only), seed, straggler, nm-heartbeat-ms
 * (1000), am-heartbeat-ms (1000), nm-vcores, nm-memory-mb, container-vcores, container-memory-mb, pool-size,
 * timeout-s, mode (the AM's: auto|speculate|dollymp|none).
 */
public final class SlsBench {
  private SlsBench() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> a = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--")) {
        throw new IllegalArgumentException("expected --key value, got " + args[i]);
      }
      a.put(args[i].substring(2), args[i + 1]);
    }
    int code = 1;
    try {
      useHostsFile(a);
      code = run(a);
    } catch (Exception e) {
      e.printStackTrace();
    }
    System.out.flush();
    Runtime.getRuntime().halt(code); // SLS's threads (and the RM's) do not all stop by themselves
  }

  static int run(Map<String, String> a) throws Exception {
    String scheduler = a.getOrDefault("scheduler", "capacity");
    Path out = Paths.get(a.get("out")).toAbsolutePath();
    Files.createDirectories(out);
    int jobs = Integer.parseInt(a.get("jobs"));
    long timeoutMs = 1000L * Long.parseLong(a.getOrDefault("timeout-s", "1800"));
    Configuration conf = new Configuration(false);
    conf.set(SLSConfiguration.AM_TYPE_PREFIX + "mapreduce", DollyMPAMSimulator.class.getName());
    conf.set(SLSConfiguration.AM_TYPE_PREFIX + "dollymp", DollyMPAMSimulator.class.getName());
    conf.set(DollyMPAMSimulator.MODE, a.getOrDefault("mode", "auto"));
    conf.set(DollyMPAMSimulator.STRAGGLER, a.getOrDefault("straggler", DollyMPAMSimulator.DEFAULT_STRAGGLER));
    conf.set(DollyMPAMSimulator.SEED, a.getOrDefault("seed", "1"));
    switch (scheduler) {
      case "capacity":
        conf.set(YarnConfiguration.RM_SCHEDULER, SLSCapacityScheduler.class.getName());
        conf.set("yarn.scheduler.capacity.root.queues", "default");
        conf.set("yarn.scheduler.capacity.root.default.capacity", "100");
        break;
      case "fair":
        // Hadoop's FairScheduler as it ships, one queue: every application in root.default.
        conf.set(YarnConfiguration.RM_SCHEDULER, SLSFairScheduler.class.getName());
        conf.setBoolean("yarn.scheduler.fair.user-as-default-queue", false);
        conf.setBoolean("yarn.scheduler.fair.allow-undeclared-pools", false);
        // SLS checks each trace queue against the allocation file; the one queue, declared with no settings.
        Path alloc = out.resolve("fair-scheduler.xml");
        Files.write(alloc, "<?xml version=\"1.0\"?>\n<allocations><queue name=\"default\"/></allocations>\n"
            .getBytes(StandardCharsets.UTF_8));
        conf.set("yarn.scheduler.fair.allocation.file", alloc.toString());
        break;
      case "dollymp":
        conf.set(YarnConfiguration.RM_SCHEDULER, SLSDollyMPScheduler.class.getName());
        conf.set(ShimConfig.SERVICE_ADDRESS, a.get("service"));
        conf.set(ShimConfig.FALLBACK_POLICY, "none");
        // --shim-conf key=value;key=value: the shim's own keys (yarn.scheduler.dollymp.<key>) for this run.
        for (String kv : a.getOrDefault("shim-conf", "").split(";")) {
          if (!kv.isEmpty()) {
            int eq = kv.indexOf('=');
            if (eq <= 0) {
              throw new IllegalArgumentException("--shim-conf: expected key=value, got " + kv);
            }
            conf.set(ShimConfig.PREFIX + kv.substring(0, eq), kv.substring(eq + 1));
          }
        }
        break;
      default:
        throw new IllegalArgumentException("scheduler: capacity, fair or dollymp, got " + scheduler);
    }
    // SLS's metrics time the scheduler's event handling (node heartbeats: heartbeat_p99_added_ms). Not under
    // FairScheduler: SLS 3.4.3's FairSchedulerMetrics can look up an attempt's queue before it is set
    // (NullPointerException in QueueManager.ensureRootPrefix on ATTEMPT_ADDED), and that job never starts.
    conf.setBoolean(SLSConfiguration.METRICS_SWITCH, !scheduler.equals("fair"));
    conf.setInt(SLSConfiguration.METRICS_WEB_ADDRESS_PORT, freePort());
    conf.setInt(SLSConfiguration.METRICS_TIMER_WINDOW_SIZE, 200_000);
    conf.setInt(SLSConfiguration.NM_HEARTBEAT_INTERVAL_MS, Integer.parseInt(a.getOrDefault("nm-heartbeat-ms", "1000")));
    conf.setInt(SLSConfiguration.AM_HEARTBEAT_INTERVAL_MS, Integer.parseInt(a.getOrDefault("am-heartbeat-ms", "1000")));
    conf.setInt(SLSConfiguration.RUNNER_POOL_SIZE, Integer.parseInt(a.getOrDefault("pool-size", "16")));
    conf.setInt(SLSConfiguration.NM_VCORES, Integer.parseInt(a.getOrDefault("nm-vcores", "8")));
    conf.setInt(SLSConfiguration.NM_MEMORY_MB, Integer.parseInt(a.getOrDefault("nm-memory-mb", "16384")));
    conf.setInt(SLSConfiguration.CONTAINER_VCORES, Integer.parseInt(a.getOrDefault("container-vcores", "1")));
    conf.setInt(SLSConfiguration.CONTAINER_MEMORY_MB, Integer.parseInt(a.getOrDefault("container-memory-mb", "1024")));
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 128);
    for (String key : new String[] {YarnConfiguration.RM_ADDRESS, YarnConfiguration.RM_SCHEDULER_ADDRESS,
        YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, YarnConfiguration.RM_ADMIN_ADDRESS,
        YarnConfiguration.RM_WEBAPP_ADDRESS}) {
      conf.set(key, "127.0.0.1:" + freePort());
    }
    String nodes = a.get("nodes");
    for (String host : hosts(Paths.get(nodes))) {
      NetUtils.addStaticResolution(host, "127.0.0.1"); // container tokens resolve the simulated hosts
    }
    MiniClusters.ownNodeAttributeStore(conf, out.resolve("node-attribute"));
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.shutdown();
    SlsJobRecords.clear();
    long t0 = System.currentTimeMillis();
    SLSRunner sls = new SLSRunner(conf);
    sls.run(new String[] {"-tracetype", "RUMEN", "-tracelocation", a.get("trace"), "-nodes", nodes, "-output",
        out.resolve("sls").toString()});
    long deadline = t0 + timeoutMs;
    int created = sls.getRemainingApps();
    if (created < jobs) {
      System.out.printf(Locale.ROOT, "SLS_ERROR scheduler=%s: SLS created %d of the %d jobs' AMs (see the log)%n",
          scheduler, created, jobs);
      deadline = 0;
    }
    double busyMem = 0;
    double busyCores = 0;
    int samples = 0;
    long lastReport = 0;
    while (SlsJobRecords.count() < jobs && System.currentTimeMillis() < deadline) {
      Thread.sleep(1000);
      QueueMetrics root = QueueMetrics.getQueueMetrics().get("root");
      if (root != null && SlsJobRecords.count() < jobs) {
        double mem = root.getAllocatedMB() + root.getAvailableMB();
        double cores = root.getAllocatedVirtualCores() + root.getAvailableVirtualCores();
        if (mem > 0 && cores > 0) {
          busyMem += root.getAllocatedMB() / mem;
          busyCores += root.getAllocatedVirtualCores() / cores;
          samples++;
        }
      }
      if (System.currentTimeMillis() - lastReport > 30_000) {
        lastReport = System.currentTimeMillis();
        System.out.printf(Locale.ROOT, "SLS_PROGRESS scheduler=%s finished=%d/%d elapsed_s=%d%n", scheduler,
            SlsJobRecords.count(), jobs, (lastReport - t0) / 1000);
      }
    }
    long wall = System.currentTimeMillis() - t0;
    List<SlsJobRecords.Job> done = SlsJobRecords.all();
    ResourceManager rm = DollyMPAMSimulator.resourceManager();
    double[] hb = rm == null ? new double[3]
        : SlsTimers.nodeUpdateMs(((SchedulerWrapper) rm.getResourceScheduler()).getSchedulerMetrics());
    Map<String, Long> shim = shimCounters();
    StringBuilder json = new StringBuilder();
    json.append(String.format(Locale.ROOT, "{\"scheduler\": \"%s\", \"jobs_expected\": %d, \"jobs_finished\": %d, "
        + "\"wall_s\": %.1f, \"utilisation\": {\"vcores\": %.4f, \"memory\": %.4f}, \"node_update_p50_ms\": %.4f, "
        + "\"node_update_p99_ms\": %.4f, \"node_updates\": %d, \"shim_proposals\": %d, \"shim_stale\": %d, "
        + "\"shim_committed\": %d, \"shim_clones_committed\": %d, \"records\": [", scheduler, jobs, done.size(),
        wall / 1000.0, samples == 0 ? 0 : busyCores / samples, samples == 0 ? 0 : busyMem / samples, hb[0], hb[1],
        (long) hb[2], shim.getOrDefault("ProposalsReceived", 0L),
        shim.getOrDefault("Dropped_PLACEMENT_DROPPED_STALE_EPOCH", 0L), shim.getOrDefault("ContainersCommitted", 0L),
        shim.getOrDefault("CloneContainersCommitted", 0L)));
    for (int i = 0; i < done.size(); i++) {
      json.append(i == 0 ? "" : ", ").append(done.get(i).toJson());
    }
    json.append("]}\n");
    Path result = out.resolve("result-" + scheduler + ".json");
    Files.write(result, json.toString().getBytes(StandardCharsets.UTF_8));
    System.out.println("SLS_RESULT " + result);
    return done.size() >= jobs ? 0 : 3;
  }

  /**
   * Resolves the simulated hosts (and this machine's own names) from a hosts file of the run's instead of
   * the system's resolver: the RM looks every NodeManager's host up as it registers
   * (NodesListManager), and with no DNS answering, 1,000 lookups took minutes before the first heartbeat.
   * Set before anything here resolves a name (the JDK reads {@code jdk.net.hosts.file} once).
   */
  private static void useHostsFile(Map<String, String> a) throws IOException {
    Path out = Paths.get(a.get("out")).toAbsolutePath();
    Files.createDirectories(out);
    StringBuilder hosts = new StringBuilder("127.0.0.1 localhost\n");
    Path self = Paths.get("/proc/sys/kernel/hostname");
    if (Files.isReadable(self)) {
      hosts.append("127.0.0.1 ").append(new String(Files.readAllBytes(self), StandardCharsets.UTF_8).trim())
          .append('\n');
    }
    for (String host : hosts(Paths.get(a.get("nodes")))) {
      hosts.append("127.0.0.1 ").append(host).append('\n');
    }
    Path file = out.resolve("hosts");
    Files.write(file, hosts.toString().getBytes(StandardCharsets.UTF_8));
    System.setProperty("jdk.net.hosts.file", file.toString());
  }

  /** The shim's metrics2 counters (its JMX bean), empty when the shim is not the scheduler. */
  private static Map<String, Long> shimCounters() {
    Map<String, Long> out = new HashMap<>();
    try {
      MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
      Set<ObjectName> names = mbs.queryNames(new ObjectName("Hadoop:name=DollyMPShim,*"), null);
      for (ObjectName n : names) {
        for (javax.management.MBeanAttributeInfo info : mbs.getMBeanInfo(n).getAttributes()) {
          Object v = mbs.getAttribute(n, info.getName());
          if (v instanceof Number) {
            out.put(info.getName(), ((Number) v).longValue());
          }
        }
      }
    } catch (Exception e) {
      System.out.println("SLS_WARN could not read the shim's counters: " + e);
    }
    return out;
  }

  private static List<String> hosts(Path nodeFile) throws IOException {
    List<String> out = new ArrayList<>();
    Matcher m = Pattern.compile("\"node\"\\s*:\\s*\"([^\"]+)\"").matcher(
        new String(Files.readAllBytes(nodeFile), StandardCharsets.UTF_8));
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
