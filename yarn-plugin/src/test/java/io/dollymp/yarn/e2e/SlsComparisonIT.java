package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.testkit.DecisionServiceProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.fs.FileUtil;
import org.junit.jupiter.api.Test;

/**
 * The SLS comparison on a small trace (the benchmark's runner, {@code SlsBench}, one JVM per scheduler as
 * {@code make bench-sls} runs it): 40 MapReduce jobs on 50 simulated NodeManagers under CapacityScheduler,
 * FairScheduler and the DollyMP shim with the real decision service, every job's AM the project's
 * {@code DollyMPAMSimulator}. Every job finishes under all three; under DollyMP clones are launched and the
 * losing copies killed.
 */
class SlsComparisonIT {
  private static final Path WORK = Paths.get("target", "e2e-sls-comparison").toAbsolutePath();
  private static final int JOBS = 40;
  private static final int NODES = 50;
  private static final Pattern INT = Pattern.compile("\"(clones|killed)\": (\\d+)");

  @Test
  void everyJobFinishesUnderAllThreeAndDollympClones() throws Exception {
    FileUtil.fullyDelete(WORK.toFile());
    Files.createDirectories(WORK);
    Path trace = writeTrace(WORK.resolve("trace.json"));
    Path nodes = writeNodes(WORK.resolve("nodes.json"));
    for (String scheduler : new String[] {"capacity", "fair"}) {
      String result = run(scheduler, trace, nodes, null);
      assertEquals(JOBS, finished(result), scheduler + ": every job finished: " + result);
    }
    try (DecisionServiceProcess service = new DecisionServiceProcess(WORK.resolve("service"), "dollymp")) {
      int port = service.awaitGrpcPort(60_000);
      String result = run("dollymp", trace, nodes, "127.0.0.1:" + port);
      assertEquals(JOBS, finished(result), "dollymp: every job finished: " + result);
      assertTrue(sum(result, "clones") > 0, "dollymp: clones launched: " + result);
      assertTrue(sum(result, "killed") > 0, "dollymp: losing copies killed: " + result);
      assertTrue(service.logText().contains("policy dollymp"), "the decisions came from the service");
    }
  }

  /** SlsBench in its own JVM (SLS and the RM keep static state); its result file's text. */
  private static String run(String scheduler, Path trace, Path nodes, String service) throws Exception {
    Path out = WORK.resolve(scheduler);
    List<String> cmd = new ArrayList<>(Arrays.asList(Paths.get(System.getProperty("java.home"), "bin", "java")
        .toString(), "-Xmx2g"));
    cmd.addAll(Arrays.asList(System.getProperty("dollymp.jdk17.opens", "").trim().split("\\s+")));
    cmd.removeIf(String::isEmpty);
    cmd.addAll(Arrays.asList("-cp", System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path")), "io.dollymp.yarn.bench.SlsBench", "--scheduler", scheduler,
        "--trace", trace.toString(), "--nodes", nodes.toString(), "--out", out.toString(), "--jobs",
        Integer.toString(JOBS), "--seed", "3", "--straggler", "pareto:alpha=1.5,cap=5", "--nm-heartbeat-ms", "500",
        "--am-heartbeat-ms", "500", "--timeout-s", "100"));
    if (service != null) {
      cmd.addAll(Arrays.asList("--service", service));
    }
    Files.createDirectories(out);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(out.resolve("sls.log").toFile()).start();
    assertTrue(p.waitFor(150, TimeUnit.SECONDS), scheduler + ": SLS run did not end in time");
    Path result = out.resolve("result-" + scheduler + ".json");
    assertTrue(Files.exists(result), scheduler + ": no result (exit " + p.exitValue() + "), see " + out);
    return new String(Files.readAllBytes(result), StandardCharsets.UTF_8);
  }

  private static int finished(String result) {
    Matcher m = Pattern.compile("\"jobs_finished\": (\\d+)").matcher(result);
    return m.find() ? Integer.parseInt(m.group(1)) : -1;
  }

  private static int sum(String result, String key) {
    Matcher m = INT.matcher(result);
    int total = 0;
    while (m.find()) {
      if (m.group(1).equals(key)) {
        total += Integer.parseInt(m.group(2));
      }
    }
    return total;
  }

  /** 40 jobs arriving over 12 s: 1-6 maps of 2-4 s and one reduce of 2 s (Rumen, ids job_<arrival>_<n>). */
  private static Path writeTrace(Path file) throws Exception {
    StringBuilder out = new StringBuilder();
    java.util.Random rnd = new java.util.Random(11);
    for (int j = 0; j < JOBS; j++) {
      long at = j * 300L;
      int maps = 1 + rnd.nextInt(6);
      String id = String.format(Locale.ROOT, "%d_%04d", at, j);
      out.append(String.format(Locale.ROOT, "{\"jobID\": \"job_%s\", \"user\": \"default\", \"queue\": \"default\", "
          + "\"submitTime\": %d, \"launchTime\": %d, \"finishTime\": %d, \"mapTasks\": [", id, at, at, at + 1));
      for (int t = 0; t < maps; t++) {
        out.append(t == 0 ? "" : ", ").append(task(id, "m", "MAP", t, at, 2000 + rnd.nextInt(2000)));
      }
      out.append("], \"reduceTasks\": [").append(task(id, "r", "REDUCE", 0, at, 2000)).append("], \"otherTasks\": []}\n");
    }
    Files.write(file, out.toString().getBytes(StandardCharsets.UTF_8));
    return file;
  }

  private static String task(String id, String letter, String type, int t, long at, long ms) {
    String tid = String.format(Locale.ROOT, "%s_%s_%06d", id, letter, t);
    return String.format(Locale.ROOT, "{\"taskID\": \"task_%s\", \"taskType\": \"%s\", \"startTime\": %d, "
        + "\"finishTime\": %d, \"attempts\": [{\"attemptID\": \"attempt_%s_0\", \"startTime\": %d, \"finishTime\": %d, "
        + "\"hostName\": \"/rack0/nm0\", \"result\": \"SUCCESS\"}]}", tid, type, at, at + ms, tid, at, at + ms);
  }

  private static Path writeNodes(Path file) throws Exception {
    StringBuilder out = new StringBuilder("{\"rack\": \"rack0\", \"nodes\": [");
    for (int i = 0; i < NODES; i++) {
      out.append(i == 0 ? "" : ", ").append("{\"node\": \"nm").append(i).append("\"}");
    }
    Files.write(file, out.append("]}\n").toString().getBytes(StandardCharsets.UTF_8));
    return file;
  }
}
