package io.dollymp.yarn.am;

import java.util.List;
import java.util.Objects;

/** One task as the AM sees it. {@code state} is Hadoop's TaskState name. */
public final class TaskView {
  private final String taskId;
  private final String phase;
  private final String state;
  private final List<AttemptView> attempts;
  private final String successfulAttempt;

  public TaskView(String taskId, String phase, String state, List<AttemptView> attempts) {
    this(taskId, phase, state, attempts, "");
  }

  /** {@code successfulAttempt}: the attempt MapReduce took for the task once it succeeded, else "". */
  public TaskView(String taskId, String phase, String state, List<AttemptView> attempts, String successfulAttempt) {
    this.taskId = taskId;
    this.phase = phase;
    this.state = state;
    this.attempts = attempts;
    this.successfulAttempt = successfulAttempt == null ? "" : successfulAttempt;
  }

  public String successfulAttempt() {
    return successfulAttempt;
  }

  public String taskId() {
    return taskId;
  }

  public String phase() {
    return phase;
  }

  public String state() {
    return state;
  }

  public List<AttemptView> attempts() {
    return attempts;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof TaskView)) {
      return false;
    }
    TaskView v = (TaskView) o;
    return Objects.equals(taskId, v.taskId) && Objects.equals(phase, v.phase) && Objects.equals(state, v.state)
        && Objects.equals(attempts, v.attempts)
        && successfulAttempt.equals(v.successfulAttempt);
  }

  @Override
  public int hashCode() {
    return Objects.hash(taskId, phase, state, attempts, successfulAttempt);
  }

  @Override
  public String toString() {
    return "TaskView[" + taskId + " " + phase + " " + state + " " + attempts + "]";
  }
}
