package io.dollymp.yarn.am;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.proto.v1.AttemptReport;
import io.dollymp.proto.v1.AttemptState;
import io.dollymp.proto.v1.CloneCap;
import io.dollymp.proto.v1.ClonePlan;
import io.dollymp.proto.v1.TaskClones;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

class CloneBookTest {
  private static AttemptView a(String id, String container, String state) {
    return new AttemptView(id, container, container.isEmpty() ? "" : "n1:1", state, 1000, 3000, "");
  }

  private static TaskView t(String id, String state, AttemptView... as) {
    return new TaskView(id, id.contains("_m_") ? "map" : "reduce", state, List.of(as));
  }

  private static ClonePlan plan(int map, int reduce) {
    return ClonePlan.newBuilder().putClonesPerPhase("map", map).putClonesPerPhase("reduce", reduce).build();
  }

  @Test
  void clonesAreAddedOneTaskAtATimeEveryTasksFirstBeforeAnySecond() {
    Map<String, Integer> clones = new java.util.LinkedHashMap<>();
    clones.put("t0", 2);
    clones.put("t1", 1);
    clones.put("t2", 2);
    assertEquals(List.of("t0", "t1", "t2", "t0", "t2"), CloneBook.roundRobin(clones));
    assertEquals(List.of(), CloneBook.roundRobin(Map.of()));
    assertEquals(List.of(), CloneBook.roundRobin(Map.of("t0", 0)));
  }

  @Test
  void clonesOnlyRunningTasksOnceAndCapsAtTwo() {
    CloneBook b = new CloneBook(2);
    List<TaskView> v = List.of(t("task_1_m_0", "SCHEDULED", a("a_m_0_0", "", "UNASSIGNED")),
        t("task_1_m_1", "RUNNING", a("a_m_1_0", "c1", "RUNNING")));
    assertTrue(b.toClone(v).isEmpty(), "no plan yet: no clones");
    b.setPlan(plan(5, 0)); // the service asks for more than allowed
    assertEquals(Map.of("task_1_m_1", 1), b.toClone(v), "SCHEDULED tasks must not get T_ADD_SPEC_ATTEMPT");
    assertTrue(b.toClone(v).isEmpty(), "no second clone while a task of the phase has no first one");
    b.changes(List.of(t("task_1_m_1", "RUNNING", a("a_m_1_0", "c1", "RUNNING"), a("a_m_1_1", "", "UNASSIGNED"))), 1);
    List<TaskView> both = List.of(t("task_1_m_0", "RUNNING", a("a_m_0_0", "c0", "RUNNING")),
        t("task_1_m_1", "RUNNING", a("a_m_1_0", "c1", "RUNNING"), a("a_m_1_1", "", "UNASSIGNED")));
    assertEquals(Map.of("task_1_m_0", 1), b.toClone(both), "the last task to run gets its first clone first");
    b.changes(List.of(t("task_1_m_0", "RUNNING", a("a_m_0_0", "c0", "RUNNING"), a("a_m_0_1", "", "UNASSIGNED"))), 2);
    both = List.of(t("task_1_m_0", "RUNNING", a("a_m_0_0", "c0", "RUNNING"), a("a_m_0_1", "", "UNASSIGNED")),
        t("task_1_m_1", "RUNNING", a("a_m_1_0", "c1", "RUNNING"), a("a_m_1_1", "", "UNASSIGNED")));
    assertEquals(Map.of("task_1_m_0", 1, "task_1_m_1", 1), b.toClone(both), "then every task's second");
    assertTrue(b.toClone(both).isEmpty(), "capped at two clones");
    assertEquals(2, b.clonesSent("task_1_m_1"));
  }

  @Test
  void withACloneAfterStartWaitClonesFollowTheOriginalsStartUp() {
    CloneBook b = new CloneBook(2, AmConfig.DEFAULT_PROGRESS_REPORT_MS, 10_000);
    b.setPlan(plan(1, 0));
    // launched at 1000 ms (a(...)'s launch time), no progress yet: its JVM may still be starting
    List<TaskView> starting = List.of(t("task_1_m_0", "RUNNING", running("a0", "c0", 0f)));
    assertTrue(b.toClone(starting, 5_000).isEmpty(), "no clone while the original starts up");
    List<TaskView> working = List.of(t("task_1_m_0", "RUNNING", running("a0", "c0", 0.05f)));
    assertEquals(Map.of("task_1_m_0", 1), b.toClone(working, 5_000), "the original reports progress: clone");
    CloneBook slow = new CloneBook(2, AmConfig.DEFAULT_PROGRESS_REPORT_MS, 10_000);
    slow.setPlan(plan(1, 0));
    assertTrue(slow.toClone(starting, 10_999).isEmpty());
    assertEquals(Map.of("task_1_m_0", 1), slow.toClone(starting, 11_000),
        "an original silent for the whole wait gets its clone anyway (its start-up is the straggler)");
    CloneBook none = new CloneBook(2, AmConfig.DEFAULT_PROGRESS_REPORT_MS, 10_000);
    none.setPlan(plan(1, 0));
    assertTrue(none.toClone(List.of(t("task_1_m_1", "RUNNING",
        new AttemptView("b0", "", "", "UNASSIGNED", 0, 0, ""))), 60_000).isEmpty(),
        "no copy launched yet: wait");
  }

  @Test
  void neverMoreThanThreeLiveCopiesAndNoCloneAfterSuccess() {
    CloneBook b = new CloneBook(2);
    b.setPlan(plan(2, 0));
    Map<String, Integer> c = b.toClone(List.of(
        t("task_1_m_0", "RUNNING", a("a0", "c0", "RUNNING"), a("a1", "c1", "RUNNING")),
        t("task_1_m_1", "RUNNING", a("b0", "c2", "SUCCEEDED"))));
    assertEquals(Map.of("task_1_m_0", 1), c);
  }

  @Test
  void aLateCloneThatYieldedItsContainerBeforeTheTaskSucceededMayBeLaunchedAgain() {
    CloneBook b = new CloneBook(2);
    b.setPlan(late("task_1_m_0", 1));
    assertEquals(Map.of("task_1_m_0", 1), b.toClone(List.of(t("task_1_m_0", "RUNNING", a("a0", "c0", "RUNNING")))));
    b.changes(List.of(t("task_1_m_0", "RUNNING", a("a0", "c0", "RUNNING"), a("a1", "", "UNASSIGNED"))), 0);
    assertTrue(b.isClone("task_1_m_0", "a1"));
    // the clone ran, then was preempted for another job's original: the plan's one clone is owed again
    List<TaskView> yielded = List.of(t("task_1_m_0", "RUNNING", a("a0", "c0", "RUNNING"),
        a("a1", "c1", "KILLED")));
    assertEquals(Map.of("task_1_m_0", 1), b.toClone(yielded));
    assertTrue(b.toClone(yielded).isEmpty(), "once: the new clone must show up first");
    // a clone at launch (the phase's count) that yielded is not launched again
    CloneBook launch = new CloneBook(2);
    launch.setPlan(plan(1, 0));
    launch.toClone(List.of(t("task_1_m_0", "RUNNING", a("a0", "c0", "RUNNING"))));
    launch.changes(List.of(t("task_1_m_0", "RUNNING", a("a0", "c0", "RUNNING"), a("a1", "c1", "RUNNING"))), 0);
    assertTrue(launch.toClone(yielded).isEmpty());
    // after the task succeeded a killed clone is a loser, never relaunched
    CloneBook done = new CloneBook(2);
    done.setPlan(plan(1, 0));
    done.toClone(List.of(t("task_1_m_0", "RUNNING", a("a0", "c0", "RUNNING"))));
    done.changes(List.of(t("task_1_m_0", "RUNNING", a("a0", "c0", "RUNNING"), a("a1", "c1", "RUNNING"))), 0);
    assertTrue(done.toClone(List.of(t("task_1_m_0", "SUCCEEDED", a("a0", "c0", "SUCCEEDED"),
        a("a1", "c1", "KILLED")))).isEmpty());
  }

  private static ClonePlan late(String taskId, int clones) {
    return plan(0, 0).toBuilder().addTaskClones(TaskClones.newBuilder().setTaskId(taskId).setClones(clones))
        .build();
  }

  private static AttemptView running(String id, String container, float progress) {
    return new AttemptView(id, container, "n1:1", "RUNNING", 1000, 0, "", progress);
  }

  @Test
  void aLateTaskGetsItsClonesWhenThePlanNamesItAndKeepsThem() {
    CloneBook b = new CloneBook(2);
    b.setPlan(plan(0, 0));
    List<TaskView> v1 = List.of(t("task_1_m_0", "RUNNING", running("a0", "c0", 0.05f)));
    assertTrue(b.toClone(v1).isEmpty(), "no clones at launch");
    b.setPlan(late("task_1_m_0", 1));
    assertEquals(Map.of("task_1_m_0", 1), b.toClone(v1), "named late: one clone");
    assertTrue(b.toClone(v1).isEmpty(), "not again before the clone's attempt appears");
    List<TaskView> v2 = List.of(t("task_1_m_0", "RUNNING", running("a0", "c0", 0.05f),
        a("a1", "", "UNASSIGNED")));
    b.changes(v2, 5);
    assertTrue(b.isClone("task_1_m_0", "a1") && !b.isClone("task_1_m_0", "a0"));
    b.setPlan(plan(0, 0)); // a later plan that does not name the task takes nothing back
    assertEquals(1, b.clonesFor("task_1_m_0", "map"));
    b.setPlan(late("task_1_m_0", 2)); // the first clone is late too
    assertEquals(Map.of("task_1_m_0", 1), b.toClone(v2), "the second clone, within three copies");
    List<TaskView> v3 = List.of(t("task_1_m_0", "RUNNING", running("a0", "c0", 0.05f),
        a("a1", "", "UNASSIGNED"), a("a2", "", "UNASSIGNED")));
    b.changes(v3, 6);
    assertTrue(b.isClone("task_1_m_0", "a2"));
    assertEquals(2, b.clonesSent("task_1_m_0"));
    b.setPlan(late("task_1_m_0", 5));
    assertTrue(b.toClone(v3).isEmpty(), "never more than two clones");
  }

  @Test
  void anOverriddenPhaseKeepsItsPinnedCountAgainstPerTaskClones() {
    Configuration conf = new Configuration(false);
    conf.set(PlanOverride.KEY, "map=1");
    ClonePlan p = PlanOverride.apply(conf, late("task_1_m_0", 2).toBuilder()
        .addTaskClones(TaskClones.newBuilder().setTaskId("task_1_r_0").setClones(1)).build());
    CloneBook b = new CloneBook(2);
    b.setPlan(p);
    assertEquals(1, b.clonesFor("task_1_m_0", "map"), "the pinned phase count, not the service's per-task 2");
    assertEquals(1, b.clonesFor("task_1_r_0", "reduce"), "phases not pinned keep their per-task clones");
  }

  @Test
  void aRunningAttemptIsReportedAgainAsItsProgressPassesEachTenth() {
    CloneBook b = new CloneBook(2);
    b.setPlan(plan(0, 0));
    List<AttemptReport> r1 = b.changes(List.of(t("task_1_m_0", "RUNNING", running("a0", "c0", 0.05f))), 1);
    assertEquals(1, r1.size());
    assertEquals(0.05, r1.get(0).getProgress(), 1e-6);
    assertEquals(1000, r1.get(0).getLaunchTimeMs());
    assertTrue(b.changes(List.of(t("task_1_m_0", "RUNNING", running("a0", "c0", 0.08f))), 2).isEmpty(),
        "same tenth: no report");
    List<AttemptReport> r2 = b.changes(List.of(t("task_1_m_0", "RUNNING", running("a0", "c0", 0.31f))), 3);
    assertEquals(1, r2.size());
    assertEquals(0.31, r2.get(0).getProgress(), 1e-6);
  }

  @Test
  void anAttemptWithMapReadsDueIsReportedAgainUnchanged() {
    CloneBook b = new CloneBook(2);
    b.setPlan(plan(0, 0));
    List<TaskView> views = List.of(t("task_1_r_0", "RUNNING", running("r0", "c0", 0.05f)));
    assertEquals(1, b.changes(views, 1).size());
    assertTrue(b.changes(views, 2).isEmpty(), "nothing changed, nothing due");
    List<AttemptReport> due = b.changes(views, 3, java.util.Set.of("r0", "not-an-attempt-here"));
    assertEquals(1, due.size(), "its reduce copy's reads are due: reported again");
    assertEquals("r0", due.get(0).getAttemptId());
    assertEquals(AttemptState.ATTEMPT_RUNNING, due.get(0).getState());
  }

  @Test
  void aRunningAttemptWhoseProgressGrewIsReportedAgainAfterTheReportInterval() {
    CloneBook b = new CloneBook(2, 3000);
    b.setPlan(plan(0, 0));
    assertEquals(1, b.changes(List.of(t("task_1_m_0", "RUNNING", running("a0", "c0", 0.02f))), 10_000).size());
    assertTrue(b.changes(List.of(t("task_1_m_0", "RUNNING", running("a0", "c0", 0.04f))), 12_999).isEmpty(),
        "same tenth, within the interval: no report");
    assertTrue(b.changes(List.of(t("task_1_m_0", "RUNNING", running("a0", "c0", 0.02f))), 14_000).isEmpty(),
        "progress not grown since the last report: no report however late");
    List<AttemptReport> r = b.changes(List.of(t("task_1_m_0", "RUNNING", running("a0", "c0", 0.05f))), 14_000);
    assertEquals(1, r.size(), "grown, interval passed: reported again");
    assertEquals(0.05, r.get(0).getProgress(), 1e-6);
    assertTrue(b.changes(List.of(t("task_1_m_0", "RUNNING", running("a0", "c0", 0.06f))), 16_999).isEmpty(),
        "the interval counts from the latest report");
    assertEquals(1, b.changes(List.of(t("task_1_m_0", "RUNNING", running("a0", "c0", 0.06f))), 17_000).size());
  }

  @Test
  void theCloneCapIsTheWireContractsOne() {
    // defined once, in proto/dollymp/v1/scheduler.proto; the service's MAX_CLONES (pyscheduler/objects/job.py)
    // reads the same constant (tests/core/test_clone_cap.py)
    assertEquals(CloneCap.MAX_CLONES_PER_TASK_VALUE, AmConfig.HARD_MAX_CLONES);
    assertEquals(2, AmConfig.HARD_MAX_CLONES, "DollyMP: at most three copies of a task");
    int over = AmConfig.HARD_MAX_CLONES + 3;
    CloneBook b = new CloneBook(over);
    b.setPlan(plan(over, 0).toBuilder().addTaskClones(TaskClones.newBuilder().setTaskId("task_1_r_0")
        .setClones(over)).build());
    assertEquals(AmConfig.HARD_MAX_CLONES, b.clonesFor("task_1_m_0", "map"));
    assertEquals(AmConfig.HARD_MAX_CLONES, b.clonesFor("task_1_r_0", "reduce"));
    Configuration conf = new Configuration(false);
    assertEquals(AmConfig.HARD_MAX_CLONES, AmConfig.maxClones(conf), "the job's default");
    conf.setInt(AmConfig.MAX_CLONES, over);
    assertEquals(AmConfig.HARD_MAX_CLONES, AmConfig.maxClones(conf));
  }

  @Test
  void perTaskOverridesAndMaxClonesSetting() {
    CloneBook b = new CloneBook(1);
    b.setPlan(plan(0, 0).toBuilder().addTaskClones(TaskClones.newBuilder().setTaskId("task_1_r_0").setClones(2))
        .build());
    assertEquals(1, b.clonesFor("task_1_r_0", "reduce"));
    assertEquals(0, b.clonesFor("task_1_r_1", "reduce"));
    Configuration conf = new Configuration(false);
    conf.setInt(AmConfig.MAX_CLONES, -1);
    assertThrows(IllegalArgumentException.class, () -> AmConfig.maxClones(conf));
  }

  @Test
  void reportsFlagClonesOnceEachAndRecordTheWinner() {
    CloneBook b = new CloneBook(2);
    b.setPlan(plan(1, 0));
    List<TaskView> v1 = List.of(t("task_1_m_0", "RUNNING", a("a0", "c0", "RUNNING")));
    assertEquals(1, b.changes(v1, 1).size());
    b.toClone(v1);
    List<TaskView> v2 = List.of(t("task_1_m_0", "RUNNING", a("a0", "c0", "RUNNING"),
        a("a1", "", "UNASSIGNED")));
    List<AttemptReport> waiting = b.changes(v2, 2);
    assertEquals(1, waiting.size(), "a clone waiting for its container is reported");
    assertEquals("a1", waiting.get(0).getAttemptId());
    assertTrue(waiting.get(0).getIsClone());
    assertEquals(AttemptState.ATTEMPT_WAITING, waiting.get(0).getState());
    assertTrue(b.changes(v2, 2).isEmpty(), "reported once while nothing changes");
    List<TaskView> v3 = List.of(t("task_1_m_0", "SUCCEEDED", a("a0", "c0", "KILLED"),
        a("a1", "c1", "SUCCEEDED")));
    List<AttemptReport> r = new ArrayList<>(b.changes(v3, 3));
    assertEquals(2, r.size());
    AttemptReport clone = r.stream().filter(x -> x.getAttemptId().equals("a1")).findFirst().orElseThrow();
    assertTrue(clone.getIsClone());
    assertEquals(AttemptState.ATTEMPT_SUCCEEDED, clone.getState());
    assertEquals(2.0, clone.getDurationS(), 1e-9);
    assertFalse(r.stream().filter(x -> x.getAttemptId().equals("a0")).findFirst().orElseThrow().getIsClone());
    assertEquals("a1", b.winner("task_1_m_0"));
    assertNull(b.winner("task_1_m_9"));
    b.unreport(r);
    assertEquals(2, b.changes(v3, 4).size(), "a failed call's reports are sent again");
  }

  @Test
  void whenBothCopiesSucceedTheWinnerIsTheAttemptMapReduceTookAndOnlyItIsReportedWon() {
    CloneBook b = new CloneBook(2);
    b.setPlan(plan(1, 0));
    List<TaskView> v1 = List.of(t("task_1_m_0", "RUNNING", a("a0", "c0", "RUNNING")));
    b.changes(v1, 1);
    b.toClone(v1);
    // Both copies show SUCCEEDED (the original finished before its kill came); MapReduce took a1.
    List<TaskView> v2 = List.of(new TaskView("task_1_m_0", "map", "SUCCEEDED",
        List.of(a("a0", "c0", "SUCCEEDED"), a("a1", "c1", "SUCCEEDED")), "a1"));
    List<AttemptReport> r = b.changes(v2, 2);
    assertEquals(2, r.size());
    assertEquals("a1", b.winner("task_1_m_0"));
    for (AttemptReport x : r) {
      assertTrue(x.hasWon(), x.getAttemptId());
      assertEquals(x.getAttemptId().equals("a1"), x.getWon(), x.getAttemptId());
    }
    String record = AttemptRecord.render(v2, b, "SUCCEEDED");
    assertTrue(record.contains("a0\tfalse\tc0\tn1:1\tSUCCEEDED\t1000\t3000\tfalse"), record);
    assertTrue(record.contains("a1\ttrue\tc1\tn1:1\tSUCCEEDED\t1000\t3000\ttrue"), record);
  }

  @Test
  void planOverrideReplacesNamedPhasesAndNamesBadInput() {
    Configuration conf = new Configuration(false);
    conf.set(PlanOverride.KEY, "reduce=1, omega=2.5");
    ClonePlan p = PlanOverride.apply(conf, plan(2, 0));
    assertEquals(2, p.getClonesPerPhaseOrThrow("map"));
    assertEquals(1, p.getClonesPerPhaseOrThrow("reduce"));
    assertEquals(2.5, p.getDelayAssignmentWaitS(), 1e-9);
    conf.set(PlanOverride.KEY, "reduce=x");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PlanOverride.apply(conf, p));
    assertTrue(e.getMessage().contains(PlanOverride.KEY));
  }
}
