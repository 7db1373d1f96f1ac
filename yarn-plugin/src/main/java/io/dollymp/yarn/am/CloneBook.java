package io.dollymp.yarn.am;

import io.dollymp.proto.v1.AttemptReport;
import io.dollymp.proto.v1.AttemptState;
import io.dollymp.proto.v1.ClonePlan;
import io.dollymp.proto.v1.TaskClones;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the helper knows about the job's tasks: how many clones each gets (from the service's plan),
 * which were launched, which attempts are clones, which attempt won, and which attempt changes the
 * service has not heard of yet. Pure bookkeeping over {@link TaskView}s, so it is tested without an AM.
 *
 * <p>A task gets the clones its plan gives it: the phase's count when it starts, and more later when
 * the plan names the task (a late copy: per-task clones). Clones are launched only while the task's
 * state is RUNNING (the one state in which Hadoop's TaskImpl accepts an extra attempt), only before
 * any attempt succeeded, at most {@code maxClones} (at most {@link AmConfig#HARD_MAX_CLONES}) in all
 * and never beyond 1 + {@code maxClones} live copies.
 *
 * <p>Reports: an attempt in a container on each state change and, while it runs, each time its
 * progress passes another tenth or has grown since a report at least {@code progressReportMs} old (so
 * the service can tell a late copy soon: a straggler's tenths come far apart, and its rate needs two
 * reports); a clone also while it waits for
 * its container ({@code ATTEMPT_WAITING}), so the service can tell the clone part of the job's asks
 * from the originals and place it only in idle capacity.
 */
public final class CloneBook {
  private static final class TaskBook {
    final Set<String> originals = new HashSet<>();
    final Set<String> clones = new HashSet<>();
    int clonesSent;
    String winner;
  }

  private static final Set<String> UNFINISHED_TASK_STATES =
      Collections.unmodifiableSet(new HashSet<>(Arrays.asList("NEW", "SCHEDULED", "RUNNING")));

  private final int maxClones;
  private final Map<String, TaskBook> tasks = new LinkedHashMap<>();
  private final Map<String, String> lastReported = new HashMap<>();
  private final Map<String, Sent> lastProgress = new HashMap<>();
  private final long progressReportMs;
  private final long cloneAfterStartMs;

  /** A running attempt's last reported progress and when it was reported. */
  private static final class Sent {
    final double progress;
    final long timeMs;

    Sent(double progress, long timeMs) {
      this.progress = progress;
      this.timeMs = timeMs;
    }
  }
  private final Map<String, Integer> perPhase = new HashMap<>();
  private final Map<String, Integer> granted = new HashMap<>();
  private double omegaS;
  private boolean planKnown;

  public CloneBook(int maxClones) {
    this(maxClones, AmConfig.DEFAULT_PROGRESS_REPORT_MS);
  }

  /** @param progressReportMs a running attempt whose progress grew is reported again after this long */
  public CloneBook(int maxClones, long progressReportMs) {
    this(maxClones, progressReportMs, AmConfig.DEFAULT_CLONE_AFTER_START_MS);
  }

  /**
   * @param cloneAfterStartMs a task's clones wait until one of its copies reported progress or its first
   *     copy was launched this long ago (0: no wait; {@link AmConfig#CLONE_AFTER_START_MS})
   */
  public CloneBook(int maxClones, long progressReportMs, long cloneAfterStartMs) {
    this.maxClones = Math.max(0, Math.min(AmConfig.HARD_MAX_CLONES, maxClones));
    this.progressReportMs = progressReportMs;
    this.cloneAfterStartMs = Math.max(0, cloneAfterStartMs);
  }

  public void setPlan(ClonePlan plan) {
    perPhase.clear();
    perPhase.putAll(plan.getClonesPerPhaseMap());
    for (TaskClones tc : plan.getTaskClonesList()) {
      granted.merge(tc.getTaskId(), tc.getClones(), Math::max);
    }
    double w = plan.getDelayAssignmentWaitS();
    omegaS = Double.isFinite(w) && w > 0 ? w : 0.0;
    planKnown = true;
  }

  public boolean planKnown() {
    return planKnown;
  }

  public double omegaS() {
    return omegaS;
  }

  /**
   * Clones the plan gives this task, clamped to [0, maxClones]: the larger of its phase's count and its
   * own. A per-task count is kept once seen (the service names a task only in the plan right after it
   * placed the task's clone), so a later plan without it never takes a clone back.
   */
  public int clonesFor(String taskId, String phase) {
    int c = Math.max(perPhase.getOrDefault(phase, 0), granted.getOrDefault(taskId, 0));
    return Math.max(0, Math.min(maxClones, c));
  }

  /**
   * The order to add clones in, one task id per clone: each task's first clone, in the map's order, then
   * each task's second, and so on. MapReduce's AM hands a granted container to its waiting attempts in
   * the order they asked, so when room is short the tasks with one copy get their second before any gets
   * a third: the least of two Pareto(1.5) draws keeps most of three's gain (its median 1.26 x the base,
   * against 1.17 x for three and 1.59 x for one). Added task by task, the first tasks took both their
   * clones' containers (of a 6-map job, four maps could run two clones each and two maps none).
   */
  public static List<String> roundRobin(Map<String, Integer> clones) {
    List<String> out = new ArrayList<>();
    for (int k = 0; ; k++) {
      int before = out.size();
      for (Map.Entry<String, Integer> e : clones.entrySet()) {
        if (e.getValue() > k) {
          out.add(e.getKey());
        }
      }
      if (out.size() == before) {
        return out;
      }
    }
  }

  /**
   * Tasks to clone now and how many extra attempts each; marks them as cloned. Tasks that are not
   * RUNNING, already cloned, or have a successful attempt get none.
   */
  public Map<String, Integer> toClone(List<TaskView> views) {
    return toClone(views, Long.MAX_VALUE);
  }

  /**
   * As {@link #toClone(List)} at time {@code nowMs}: with a clone-after-start wait, a task whose copies
   * have neither reported progress nor been launched that long ago gets its clones in a later call.
   */
  public Map<String, Integer> toClone(List<TaskView> views, long nowMs) {
    Map<String, Integer> out = new LinkedHashMap<>();
    if (!planKnown) {
      return out;
    }
    Map<String, Integer> floor = launchFloor(views);
    for (TaskView t : views) {
      TaskBook b = tasks.computeIfAbsent(t.taskId(), k -> new TaskBook());
      if (!"RUNNING".equals(t.state()) || !started(t, nowMs)) {
        continue;
      }
      boolean anySuccess = t.attempts().stream().anyMatch(a -> "SUCCEEDED".equals(a.state()));
      int live = (int) t.attempts().stream().filter(a -> !isFinal(a.state())).count();
      // A clone that ended before the task succeeded (it yielded its container to a waiting original,
      // or its node was lost) no longer counts as sent, but only the task's own clones (the plan named
      // it: a late copy, the phase tail) are launched again: clones at launch of a whole phase are not,
      // or they would be preempted and relaunched in turn whenever originals arrive.
      int lost = (int) t.attempts().stream()
          .filter(a -> b.clones.contains(a.attemptId()) && ("KILLED".equals(a.state()) || "FAILED".equals(a.state())))
          .count();
      int want = lost == 0 ? clonesFor(t.taskId(), t.phase())
          : Math.max(0, Math.min(maxClones, granted.getOrDefault(t.taskId(), 0)));
      int c = Math.min(want - (b.clonesSent - lost), 1 + maxClones - live);
      Integer least = floor.get(t.phase());
      if (lost == 0 && !granted.containsKey(t.taskId()) && least != null) {
        c = Math.min(c, least + 1 - b.clonesSent); // clones at launch: every task's k-th before a (k+1)-th
      }
      if (anySuccess || c <= 0 || b.clones.size() < b.clonesSent) {
        continue; // (the last clones sent must appear first, so each new attempt is told apart)
      }
      for (AttemptView a : t.attempts()) {
        if (!b.clones.contains(a.attemptId())) {
          b.originals.add(a.attemptId());
        }
      }
      b.clonesSent += c;
      out.put(t.taskId(), c);
    }
    return out;
  }

  /**
   * Per phase, the fewest clones sent to a task of it that its phase's count at launch still gives more
   * (unfinished tasks, not named on their own): a task's next clone at launch waits until every such task
   * has as many. A phase's originals get their containers one by one, and a task's clones are added once
   * it runs, so without this the first tasks to run asked for their second clones before the last ones
   * asked for their first, and took the room first.
   */
  private Map<String, Integer> launchFloor(List<TaskView> views) {
    Map<String, Integer> floor = new HashMap<>();
    for (TaskView t : views) {
      boolean done = !UNFINISHED_TASK_STATES.contains(t.state())
          || t.attempts().stream().anyMatch(a -> "SUCCEEDED".equals(a.state()));
      TaskBook b = tasks.get(t.taskId());
      int sent = b == null ? 0 : b.clonesSent;
      int atLaunch = Math.min(maxClones, perPhase.getOrDefault(t.phase(), 0));
      if (!done && !granted.containsKey(t.taskId()) && atLaunch > sent) {
        floor.merge(t.phase(), sent, Math::min);
      }
    }
    return floor;
  }

  /** A copy of the task is at work (reported progress), or its first launch is cloneAfterStartMs old. */
  private boolean started(TaskView t, long nowMs) {
    if (cloneAfterStartMs <= 0) {
      return true;
    }
    for (AttemptView a : t.attempts()) {
      if (a.progress() > 0f || (a.launchMs() > 0 && nowMs - a.launchMs() >= cloneAfterStartMs)) {
        return true;
      }
    }
    return false;
  }

  /** Attempts whose state or container changed since the last call, as reports for the service. */
  public List<AttemptReport> changes(List<TaskView> views, long nowMs) {
    return changes(views, nowMs, Collections.emptySet());
  }

  /** As {@link #changes(List, long)}, and the attempts in {@code due} (in containers) even if unchanged. */
  public List<AttemptReport> changes(List<TaskView> views, long nowMs, Set<String> due) {
    List<AttemptReport> out = new ArrayList<>();
    for (TaskView t : views) {
      TaskBook b = tasks.computeIfAbsent(t.taskId(), k -> new TaskBook());
      for (AttemptView a : t.attempts()) {
        if (b.clonesSent > 0 && !b.originals.contains(a.attemptId()) && !b.clones.contains(a.attemptId())
            && b.clones.size() < b.clonesSent) {
          b.clones.add(a.attemptId());
        }
        if (!t.successfulAttempt().isEmpty()) {
          b.winner = t.successfulAttempt(); // MapReduce's choice: two copies may both have succeeded
        } else if ("SUCCEEDED".equals(a.state()) && b.winner == null) {
          b.winner = a.attemptId();
        }
        AttemptState st = wireState(a.state());
        boolean clone = b.clones.contains(a.attemptId());
        if (clone && a.containerId().isEmpty() && !isFinal(a.state())) {
          st = AttemptState.ATTEMPT_WAITING; // the service places these last, in idle capacity only
        } else if (st == AttemptState.ATTEMPT_STATE_UNSPECIFIED || a.containerId().isEmpty()) {
          continue; // an original not yet in a container: its ask is all the service needs
        }
        boolean running = st == AttemptState.ATTEMPT_RUNNING;
        double p = running ? clamp01(a.progress()) : 0.0;
        String key = st + "|" + a.containerId() + "|" + (running ? (int) Math.floor(10 * p) : 0);
        if (key.equals(lastReported.put(a.attemptId(), key)) && !(running && progressDue(a.attemptId(), p, nowMs))
            && !due.contains(a.attemptId())) {
          continue;
        }
        if (running) {
          lastProgress.put(a.attemptId(), new Sent(p, nowMs));
        } else {
          lastProgress.remove(a.attemptId());
        }
        double dur = isFinal(a.state()) && a.launchMs() > 0 && a.finishMs() >= a.launchMs()
            ? (a.finishMs() - a.launchMs()) / 1000.0 : 0.0;
        AttemptReport.Builder r = AttemptReport.newBuilder().setTaskId(t.taskId()).setAttemptId(a.attemptId())
            .setPhaseId(t.phase()).setContainerId(a.containerId()).setNodeId(a.nodeId())
            .setIsClone(clone).setState(st).setDurationS(dur).setTimeMs(nowMs)
            .setProgress(st == AttemptState.ATTEMPT_RUNNING ? clamp01(a.progress()) : 0.0)
            .setLaunchTimeMs(Math.max(0, a.launchMs()));
        if (st == AttemptState.ATTEMPT_SUCCEEDED && b.winner != null) {
          r.setWon(a.attemptId().equals(b.winner));
        }
        out.add(r.build());
      }
    }
    return out;
  }

  /** A running attempt's progress grew since its last report, sent at least progressReportMs ago. */
  private boolean progressDue(String attemptId, double p, long nowMs) {
    Sent last = lastProgress.get(attemptId);
    return last != null && p > last.progress && nowMs - last.timeMs >= progressReportMs;
  }

  /** Forget a report so it is sent again (the call carrying it failed). */
  public void unreport(List<AttemptReport> reports) {
    for (AttemptReport r : reports) {
      lastReported.remove(r.getAttemptId());
      lastProgress.remove(r.getAttemptId());
    }
  }

  /** Forget every report so all are sent again (the service lost the job, e.g. it restarted). */
  public void unreportAll() {
    lastReported.clear();
    lastProgress.clear();
  }

  public boolean isClone(String taskId, String attemptId) {
    TaskBook b = tasks.get(taskId);
    return b != null && b.clones.contains(attemptId);
  }

  /** The attempt that succeeded first for the task, or null. */
  public String winner(String taskId) {
    TaskBook b = tasks.get(taskId);
    return b == null ? null : b.winner;
  }

  public int clonesSent(String taskId) {
    TaskBook b = tasks.get(taskId);
    return b == null ? 0 : b.clonesSent;
  }

  public int totalClonesSent() {
    return tasks.values().stream().mapToInt(b -> b.clonesSent).sum();
  }

  private static double clamp01(float p) {
    return Float.isFinite(p) ? Math.max(0.0, Math.min(1.0, p)) : 0.0;
  }

  static boolean isFinal(String attemptState) {
    return "SUCCEEDED".equals(attemptState) || "FAILED".equals(attemptState) || "KILLED".equals(attemptState);
  }

  static AttemptState wireState(String s) {
    switch (s) {
      case "RUNNING":
      case "COMMIT_PENDING":
        return AttemptState.ATTEMPT_RUNNING;
      case "SUCCEEDED":
        return AttemptState.ATTEMPT_SUCCEEDED;
      case "FAILED":
        return AttemptState.ATTEMPT_FAILED;
      case "KILLED":
        return AttemptState.ATTEMPT_KILLED;
      default:
        return AttemptState.ATTEMPT_STATE_UNSPECIFIED;
    }
  }
}
