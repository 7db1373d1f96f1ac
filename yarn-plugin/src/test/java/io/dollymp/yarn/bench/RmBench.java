package io.dollymp.yarn.bench;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.LatencyRecorder;
import io.dollymp.yarn.scheduler.ShimConfig;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.DecisionServiceProcess;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;

/**
 * {@code make bench-rm}: the same mock-node workload through a real ResourceManager twice, in one
 * run -- once with CapacityScheduler, once with the DollyMP shim and the real decision service --
 * and prints containers allocated per second, node-heartbeat handling time on the RM event thread
 * (p50/p99) and job completion times side by side. Nodes are Hadoop's MockNMs heartbeating every
 * round; applications are MockAMs asking for 1 GB / 1 vcore containers that run for a few rounds.
 * Last line: one JSON object.
 */
public final class RmBench {
  private final int nodes;
  private final int apps;
  private final int containersPerApp;
  private final long roundMs;
  private final int runRounds;

  private RmBench(int nodes, int apps, int containersPerApp, long roundMs, int runRounds) {
    this.nodes = nodes;
    this.apps = apps;
    this.containersPerApp = containersPerApp;
    this.roundMs = roundMs;
    this.runRounds = runRounds;
  }

  record Result(String name, int containers, double seconds, double containersPerS, double hbP50Ms,
      double hbP99Ms, double avgJobS, double maxJobS) {}

  public static void main(String[] args) throws Exception {
    Map<String, String> opt = new HashMap<>(Map.of("nodes", "50", "apps", "20", "containers", "100",
        "round-ms", "100", "run-rounds", "3", "policy", "default", "repeats", "3"));
    for (int i = 0; i + 1 < args.length; i += 2) {
      String key = args[i].replaceFirst("^--", "");
      if (!opt.containsKey(key)) {
        throw new IllegalArgumentException("unknown option --" + key + "; known: " + opt.keySet());
      }
      opt.put(key, args[i + 1]);
    }
    RmBench bench = new RmBench(Integer.parseInt(opt.get("nodes")), Integer.parseInt(opt.get("apps")),
        Integer.parseInt(opt.get("containers")), Long.parseLong(opt.get("round-ms")),
        Integer.parseInt(opt.get("run-rounds")));
    java.nio.file.Path work = Paths.get("target", "bench-rm").toAbsolutePath();
    FileUtil.fullyDelete(work.toFile());
    // Runs alternate (capacity, shim, shim, capacity, ...) so JIT warm-up and machine noise fall on
    // both alike; the table reports the median of each figure over the repeats.
    int repeats = Integer.parseInt(opt.get("repeats"));
    List<Result> capacityRuns = new ArrayList<>();
    List<Result> shimRuns = new ArrayList<>();
    try (DecisionServiceProcess service = new DecisionServiceProcess(work.resolve("service"), opt.get("policy"))) {
      int port = service.awaitGrpcPort(60_000);
      for (int r = 0; r < repeats; r++) {
        boolean capacityFirst = r % 2 == 0;
        if (capacityFirst) {
          capacityRuns.add(bench.run("capacity", bench.capacityConf(), null));
        }
        shimRuns.add(bench.run("dollymp-shim", bench.shimConf(port), service));
        if (!capacityFirst) {
          capacityRuns.add(bench.run("capacity", bench.capacityConf(), null));
        }
      }
    }
    List<Result> results = List.of(median("capacity", capacityRuns), median("dollymp-shim", shimRuns));
    System.out.printf(Locale.ROOT, "%nmedians over %d alternating runs each%n", repeats);
    System.out.printf(Locale.ROOT, "%-14s %10s %9s %12s %10s %10s %10s %10s%n", "scheduler", "containers",
        "seconds", "containers/s", "hb p50 ms", "hb p99 ms", "avg job s", "max job s");
    for (Result r : results) {
      System.out.printf(Locale.ROOT, "%-14s %10d %9.2f %12.1f %10.3f %10.3f %10.2f %10.2f%n", r.name(),
          r.containers(), r.seconds(), r.containersPerS(), r.hbP50Ms(), r.hbP99Ms(), r.avgJobS(), r.maxJobS());
    }
    Result cs = results.get(0);
    Result shim = results.get(1);
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("nodes", bench.nodes);
    json.put("apps", bench.apps);
    json.put("containers", cs.containers());
    json.put("repeats", repeats);
    json.put("shim_containers_per_s", round(shim.containersPerS()));
    json.put("capacity_containers_per_s", round(cs.containersPerS()));
    json.put("shim_heartbeat_p50_ms", round(shim.hbP50Ms()));
    json.put("shim_heartbeat_p99_ms", round(shim.hbP99Ms()));
    json.put("capacity_heartbeat_p50_ms", round(cs.hbP50Ms()));
    json.put("capacity_heartbeat_p99_ms", round(cs.hbP99Ms()));
    json.put("shim_heartbeat_p99_added_ms", round(shim.hbP99Ms() - cs.hbP99Ms()));
    json.put("shim_avg_job_s", round(shim.avgJobS()));
    json.put("capacity_avg_job_s", round(cs.avgJobS()));
    StringBuilder sb = new StringBuilder("{");
    json.forEach((k, v) -> sb.append(sb.length() > 1 ? ", " : "").append('"').append(k).append("\": ").append(v));
    System.out.println(sb.append('}'));
    System.exit(0);
  }

  private static Result median(String name, List<Result> runs) {
    return new Result(name, runs.get(0).containers(), med(runs, Result::seconds), med(runs, Result::containersPerS),
        med(runs, Result::hbP50Ms), med(runs, Result::hbP99Ms), med(runs, Result::avgJobS), med(runs, Result::maxJobS));
  }

  private static double med(List<Result> runs, java.util.function.ToDoubleFunction<Result> f) {
    double[] v = runs.stream().mapToDouble(f).sorted().toArray();
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  private static double round(double v) {
    return Math.round(v * 1000.0) / 1000.0;
  }

  private Configuration baseConf() {
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.shutdown();
    Configuration conf = new YarnConfiguration();
    io.dollymp.yarn.testkit.MiniClusters.ownNodeAttributeStore(conf, Paths.get("target", "bench-rm", "node-attribute"));
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 512);
    conf.set(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, "16384");
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, false);
    conf.setBoolean(YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME, true);
    // The same queue settings for both schedulers (set in code, they win over any capacity-scheduler.xml).
    conf.set("yarn.scheduler.capacity.root.queues", "default");
    conf.set("yarn.scheduler.capacity.root.default.capacity", "100");
    conf.set("yarn.scheduler.capacity.maximum-am-resource-percent", "0.5");
    conf.set("yarn.scheduler.capacity.resource-calculator",
        "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator");
    return conf;
  }

  private Configuration capacityConf() {
    Configuration conf = baseConf();
    conf.setClass(YarnConfiguration.RM_SCHEDULER, TimedCapacityScheduler.class, ResourceScheduler.class);
    return conf;
  }

  private Configuration shimConf(int port) {
    Configuration conf = baseConf();
    conf.setClass(YarnConfiguration.RM_SCHEDULER, DollyMPScheduler.class, ResourceScheduler.class);
    conf.set(ShimConfig.SERVICE_ADDRESS, "127.0.0.1:" + port);
    conf.set(ShimConfig.FALLBACK_POLICY, "none"); // measure the service path only
    return conf;
  }

  private Result run(String name, Configuration conf, DecisionServiceProcess service) throws Exception {
    System.out.println("[bench-rm] " + name + ": " + nodes + " nodes x 16 GB/16 vcores, " + apps + " apps x "
        + containersPerApp + " containers, round " + roundMs + " ms");
    MockRM rm = new MockRM(conf);
    rm.start();
    try {
      List<MockNM> nms = new ArrayList<>();
      Map<NodeId, MockNM> byId = new HashMap<>();
      for (int i = 0; i < nodes; i++) {
        // Loopback with distinct ports: container tokens resolve the host.
        MockNM nm = rm.registerNode("127.0.0.1:" + (20000 + i), 16384, 16);
        nms.add(nm);
        byId.put(nm.getNodeId(), nm);
      }
      ResourceScheduler scheduler = rm.getResourceScheduler();
      if (scheduler instanceof DollyMPScheduler shim) {
        long until = System.currentTimeMillis() + 30_000;
        while (shim.sessionState() != SessionState.RUNNING && System.currentTimeMillis() < until) {
          Thread.sleep(20);
        }
        if (shim.sessionState() != SessionState.RUNNING) {
          throw new IllegalStateException("shim never reached RUNNING: " + service.logText());
        }
      }
      // Launch the ApplicationMasters (their containers are scheduled like any other).
      List<MockAM> ams = new ArrayList<>();
      for (int a = 0; a < apps; a++) {
        RMApp app = MockRMAppSubmitter.submitWithMemory(1024, rm);
        RMAppAttempt attempt = MockRM.waitForAttemptScheduled(app, rm);
        long until = System.currentTimeMillis() + 30_000;
        while (attempt.getMasterContainer() == null && System.currentTimeMillis() < until) {
          heartbeatAll(nms, List.of(), rm);
          Thread.sleep(roundMs);
        }
        MockAM am = rm.sendAMLaunched(attempt.getAppAttemptId());
        rm.waitForState(attempt.getAppAttemptId(), RMAppAttemptState.LAUNCHED);
        am.registerAppAttempt();
        ams.add(am);
      }
      resetHeartbeat(scheduler);
      // Every AM asks at once; nodes heartbeat every round; containers finish after runRounds rounds.
      long t0 = System.nanoTime();
      for (MockAM am : ams) {
        am.allocate("*", 1024, containersPerApp, new ArrayList<>());
      }
      Map<ApplicationAttemptId, Integer> received = new HashMap<>();
      Map<ApplicationAttemptId, Integer> finished = new HashMap<>();
      Map<ApplicationAttemptId, Double> jobDone = new HashMap<>();
      List<Running> running = new ArrayList<>();
      int total = apps * containersPerApp;
      int done = 0;
      int round = 0;
      long deadline = System.currentTimeMillis() + 600_000;
      while (done < total && System.currentTimeMillis() < deadline) {
        long roundStart = System.nanoTime();
        Map<NodeId, List<ContainerStatus>> completions = new HashMap<>();
        for (var it = running.iterator(); it.hasNext();) {
          Running r = it.next();
          if (round - r.round() >= runRounds) {
            completions.computeIfAbsent(r.container().getNodeId(), k -> new ArrayList<>())
                .add(ContainerStatus.newInstance(r.container().getId(), ContainerState.COMPLETE, "", 0));
            it.remove();
            ApplicationAttemptId att = r.container().getId().getApplicationAttemptId();
            int f = finished.merge(att, 1, Integer::sum);
            done++;
            if (f == containersPerApp) {
              jobDone.put(att, (System.nanoTime() - t0) / 1e9);
            }
          }
        }
        for (MockNM nm : nms) {
          nm.nodeHeartbeat(completions.getOrDefault(nm.getNodeId(), List.of()), true);
        }
        rm.drainEvents();
        for (MockAM am : ams) {
          for (Container c : am.allocate(new ArrayList<>(), new ArrayList<>()).getAllocatedContainers()) {
            if (byId.containsKey(c.getNodeId())) {
              running.add(new Running(c, round));
              received.merge(am.getApplicationAttemptId(), 1, Integer::sum);
            }
          }
        }
        round++;
        long sleepMs = roundMs - (System.nanoTime() - roundStart) / 1_000_000;
        if (sleepMs > 0) {
          Thread.sleep(sleepMs);
        }
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      if (done < total) {
        throw new IllegalStateException(name + ": only " + done + " of " + total + " containers completed");
      }
      LatencyRecorder hb = heartbeat(scheduler);
      double avgJob = jobDone.values().stream().mapToDouble(Double::doubleValue).average().orElse(0);
      double maxJob = jobDone.values().stream().mapToDouble(Double::doubleValue).max().orElse(0);
      return new Result(name, total, seconds, total / seconds, hb.quantileMs(0.5), hb.quantileMs(0.99), avgJob,
          maxJob);
    } finally {
      rm.stop();
    }
  }

  private record Running(Container container, int round) {}

  private static void heartbeatAll(List<MockNM> nms, List<ContainerStatus> none, MockRM rm) throws Exception {
    for (MockNM nm : nms) {
      nm.nodeHeartbeat(none, true);
    }
    rm.drainEvents();
  }

  private static LatencyRecorder heartbeat(ResourceScheduler scheduler) {
    return scheduler instanceof DollyMPScheduler shim ? shim.heartbeatLatency() : TimedCapacityScheduler.HEARTBEAT;
  }

  private static void resetHeartbeat(ResourceScheduler scheduler) {
    heartbeat(scheduler).reset();
  }

}
