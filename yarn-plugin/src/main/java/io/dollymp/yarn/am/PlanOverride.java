package io.dollymp.yarn.am;

import io.dollymp.proto.v1.ClonePlan;
import org.apache.hadoop.conf.Configuration;

/**
 * An operator's override of the service's clone plan, {@code dollymp.am.plan.override}, e.g.
 * {@code map=1,reduce=1,omega=15}: the named phases' clone counts and ω replace the service's answer,
 * per-task clones of those phases included (reports still go to the service). Used to pin a job's
 * cloning for experiments and tests.
 */
public final class PlanOverride {
  public static final String KEY = AmConfig.PREFIX + "plan.override";

  private PlanOverride() {}

  public static ClonePlan apply(Configuration conf, ClonePlan plan) {
    String[] parts = conf.getTrimmedStrings(KEY);
    if (parts.length == 0) {
      return plan;
    }
    ClonePlan.Builder b = plan.toBuilder();
    java.util.Set<String> pinned = new java.util.HashSet<>();
    for (String part : parts) {
      int eq = part.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(KEY + ": expected phase=clones or omega=seconds, got '" + part + "'");
      }
      String k = part.substring(0, eq).trim();
      String v = part.substring(eq + 1).trim();
      try {
        if (k.equals("omega")) {
          b.setDelayAssignmentWaitS(Double.parseDouble(v));
        } else {
          b.putClonesPerPhase(k, Integer.parseInt(v));
          pinned.add(k);
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(KEY + ": '" + v + "' is not a number (in '" + part + "')", e);
      }
    }
    b.clearTaskClones();
    for (io.dollymp.proto.v1.TaskClones tc : plan.getTaskClonesList()) {
      if (!pinned.contains(phaseOf(tc.getTaskId()))) {
        b.addTaskClones(tc);
      }
    }
    return b.setDetail(plan.getDetail() + " [overridden by " + KEY + "]").build();
  }

  /** "map" or "reduce" for a MapReduce task id (task_<ts>_<job>_m_000003), else "". */
  static String phaseOf(String taskId) {
    return taskId.contains("_m_") ? "map" : taskId.contains("_r_") ? "reduce" : "";
  }
}
