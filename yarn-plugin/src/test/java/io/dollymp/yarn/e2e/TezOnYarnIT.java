package io.dollymp.yarn.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.client.SessionState;
import io.dollymp.yarn.testkit.ContainerLogs;
import io.dollymp.yarn.testkit.ExampleJobs;
import io.dollymp.yarn.testkit.ServiceQueries;
import io.dollymp.yarn.testkit.ShimRig;
import io.dollymp.yarn.testkit.TezHistory;
import io.dollymp.yarn.testkit.TezRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 30, part 5: Apache Tez (0.10) through a real RM with the shim (3 NodeManagers) and the real
 * decision service. Tez's OrderedWordCount (tokenize, then sum by word, then sort by count: a three-vertex
 * DAG over two scatter-gather edges) runs from Tez's own client in a JVM of its own, on Tez's jars
 * (target/tez, built by maven-invoker-plugin from src/it/tez-jars, without Hadoop) and the cluster's Hadoop
 * (tez.use.cluster.hadoop-libs), with tez.lib.uris naming the directory of Tez's jars; see {@link TezRunner}.
 * The test counts the words it wrote itself and checks Tez's output against them, in Tez's order (by
 * count), that the DAG, every vertex and every task attempt SUCCEEDED in the AM's own history log, that the
 * AM and its task containers ran Tez (DAGAppMaster, TezChild; the task containers are exactly those the
 * history log ran attempts in), and that the decision service placed every one of them.
 */
class TezOnYarnIT {
  private static final String NAME = "dollymp-tez";
  private static final Path WORK = Paths.get("target", "tez-it").toAbsolutePath();
  private static final Path TEZ = Paths.get(System.getProperty("dollymp.tez.dir", "target/tez")).toAbsolutePath();
  private static final int NODES = 3;
  /** Input files; with split grouping off, one Tokenizer task each. */
  private static final int FILES = 4;
  /** Summation tasks (OrderedWordCount's numPartitions). */
  private static final int PARTITIONS = 2;
  private static ShimRig rig;
  private static TezRunner tez;

  @BeforeAll
  static void start() throws Exception {
    assertTrue(Files.isRegularFile(TEZ.resolve("lib").resolve("tez-dag-" + tezVersion() + ".jar")),
        TEZ + " holds no Tez build: run through `mvn verify` (maven-invoker-plugin builds src/it/tez-jars)");
    rig = ShimRig.start(NAME, WORK, NODES, conf -> { });
    tez = new TezRunner(TEZ, WORK, rig.cluster.getConfig());
  }

  @AfterAll
  static void stop() {
    if (rig != null) {
      rig.close();
    }
  }

  /** The Tez version src/it/tez-jars resolved: the one tez-api's jar is named after. */
  private static String tezVersion() throws IOException {
    try (Stream<Path> s = Files.list(TEZ.resolve("lib"))) {
      return s.map(p -> p.getFileName().toString()).filter(n -> n.matches("tez-api-.*\\.jar")).findFirst()
          .map(n -> n.substring("tez-api-".length(), n.length() - ".jar".length()))
          .orElseThrow(() -> new IOException("no tez-api jar in " + TEZ.resolve("lib")));
    }
  }

  @Test
  void orderedWordCountSucceedsWithCorrectCountsAndServicePlacedContainers() throws Exception {
    Path input = WORK.resolve("input");
    Path output = WORK.resolve("output");
    Map<String, Integer> expected = ExampleJobs.writeText(input, FILES, 3000, new Random(30));
    TezRunner.Run run = tez.run("orderedwordcount", "org.apache.tez.examples.OrderedWordCount",
        List.of("-disableSplitGrouping", input.toUri().toString(), output.toUri().toString(),
            Integer.toString(PARTITIONS)), 300);
    assertTrue(run.appId() != null, "no application submitted:\n" + run.describe());
    assertEquals(0, run.exit(), run.describe());
    ApplicationReport report = rig.awaitFinished(run.appId(), 30_000);
    assertEquals("TEZ", report.getApplicationType());
    assertEquals(YarnApplicationState.FINISHED, report.getYarnApplicationState(), report.getDiagnostics());
    assertEquals(FinalApplicationStatus.SUCCEEDED, report.getFinalApplicationStatus(), report.getDiagnostics());

    // Tez's answer, in its order: one "word<TAB>count" line per word from the Sorter's single task.
    List<String[]> lines = readOutput(output);
    Map<String, Integer> counted = new HashMap<>();
    int previous = 0;
    for (String[] kv : lines) {
      int count = Integer.parseInt(kv[1]);
      assertTrue(count >= previous, "output not ordered by count at " + kv[0] + ": " + count + " after " + previous);
      previous = count;
      assertEquals(null, counted.put(kv[0], count), kv[0] + " counted twice");
    }
    assertEquals(expected, counted, "Tez's counts differ from the words written");

    // The DAG and each vertex SUCCEEDED, as the AM's own history log has it, every task attempt too.
    TezHistory history = TezHistory.awaitWhole(tez.historyDir(), run.appId(), 30_000);
    assertEquals(List.of("SUCCEEDED"), history.dagStatuses, history.text);
    assertEquals(Map.of(
        "Tokenizer", new TezHistory.Vertex(FILES, "SUCCEEDED"),
        "Summation", new TezHistory.Vertex(PARTITIONS, "SUCCEEDED"),
        "Sorter", new TezHistory.Vertex(1, "SUCCEEDED")), history.vertices, history.text);
    assertEquals(FILES + PARTITIONS + 1, history.attemptStatuses.size(), history.text);
    assertTrue(history.attemptStatuses.stream().allMatch("SUCCEEDED"::equals), history.attemptStatuses.toString());

    // The AM ran Tez's DAGAppMaster, each task container TezChild; the service placed every one of them.
    ContainerId amId = rig.yarn.getApplicationAttemptReport(report.getCurrentApplicationAttemptId()).getAMContainerId();
    List<ContainerLogs.Entry> containers = ContainerLogs.of(rig.cluster, NODES, run.appId());
    ContainerLogs.Entry am = containers.stream().filter(e -> e.container().equals(amId)).findFirst()
        .orElseThrow(() -> new AssertionError("no log of the AM container " + amId + ": " + containers));
    assertTrue(am.read("syslog").contains("DAGAppMaster"), amId + " ran no Tez AM:\n" + am.read("syslog"));
    List<ContainerLogs.Entry> tasks = containers.stream().filter(e -> !e.container().equals(amId)).toList();
    Set<ContainerId> taskIds = tasks.stream().map(ContainerLogs.Entry::container).collect(Collectors.toSet());
    assertEquals(taskIds, Set.copyOf(history.attemptContainers), "task containers launched vs. those Tez ran"
        + " attempts in");
    for (ContainerLogs.Entry e : tasks) {
      assertTrue(e.read("syslog").contains("TezChild"), e.container() + " ran no Tez task:\n" + e.read("syslog"));
    }
    Map<ContainerId, DollyMPScheduler.Source> sources = rig.shim.containerSources();
    for (ContainerLogs.Entry e : containers) {
      assertEquals(DollyMPScheduler.Source.SERVICE, sources.get(e.container()),
          e.container() + " was placed by " + sources.get(e.container()));
    }
    assertTrue(ServiceQueries.dumpDecisions(rig.service.db).contains(run.appId().toString()),
        "the decision log has nothing of " + run.appId());
    assertEquals(SessionState.RUNNING, rig.shim.sessionState());
    System.out.printf("Tez %s OrderedWordCount: %d distinct words, AM %s, %d task containers on %s, in %d ms%n",
        run.appId(), counted.size(), amId, tasks.size(),
        tasks.stream().map(e -> e.node().toString()).collect(Collectors.toCollection(TreeSet::new)), run.ms());
  }

  /** The Sorter's output files' lines (MROutput names them part-v002-o000-r-NNNNN), split at the tab. */
  private static List<String[]> readOutput(Path dir) throws IOException {
    assertTrue(Files.isRegularFile(dir.resolve("_SUCCESS")), "no _SUCCESS in " + dir);
    List<String[]> out = new ArrayList<>();
    try (Stream<Path> s = Files.list(dir)) {
      for (Path part : (Iterable<Path>) s.filter(p -> p.getFileName().toString().startsWith("part-")).sorted()
          ::iterator) {
        for (String line : Files.readAllLines(part, StandardCharsets.UTF_8)) {
          out.add(line.split("\t"));
        }
      }
    }
    assertTrue(!out.isEmpty(), "no output lines in " + dir);
    return out;
  }
}
