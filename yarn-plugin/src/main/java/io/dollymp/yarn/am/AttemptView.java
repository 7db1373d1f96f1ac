package io.dollymp.yarn.am;

import java.util.Objects;

/** One attempt as the AM sees it. {@code state} is Hadoop's TaskAttemptState name. */
public final class AttemptView {
  private final String attemptId;
  private final String containerId;
  private final String nodeId;
  private final String state;
  private final long launchMs;
  private final long finishMs;
  private final String shuffleUrl;
  private final float progress;

  public AttemptView(String attemptId, String containerId, String nodeId, String state, long launchMs,
      long finishMs, String shuffleUrl, float progress) {
    this.attemptId = attemptId;
    this.containerId = containerId;
    this.nodeId = nodeId;
    this.state = state;
    this.launchMs = launchMs;
    this.finishMs = finishMs;
    this.shuffleUrl = shuffleUrl;
    this.progress = progress;
  }

  /** An attempt with no progress reported (0). */
  public AttemptView(String attemptId, String containerId, String nodeId, String state, long launchMs,
      long finishMs, String shuffleUrl) {
    this(attemptId, containerId, nodeId, state, launchMs, finishMs, shuffleUrl, 0f);
  }

  public String attemptId() {
    return attemptId;
  }

  public String containerId() {
    return containerId;
  }

  public String nodeId() {
    return nodeId;
  }

  public String state() {
    return state;
  }

  public long launchMs() {
    return launchMs;
  }

  public long finishMs() {
    return finishMs;
  }

  public String shuffleUrl() {
    return shuffleUrl;
  }

  public float progress() {
    return progress;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof AttemptView)) {
      return false;
    }
    AttemptView v = (AttemptView) o;
    return launchMs == v.launchMs && finishMs == v.finishMs && Float.compare(progress, v.progress) == 0
        && Objects.equals(attemptId, v.attemptId) && Objects.equals(containerId, v.containerId)
        && Objects.equals(nodeId, v.nodeId) && Objects.equals(state, v.state)
        && Objects.equals(shuffleUrl, v.shuffleUrl);
  }

  @Override
  public int hashCode() {
    return Objects.hash(attemptId, containerId, nodeId, state, launchMs, finishMs, shuffleUrl, progress);
  }

  @Override
  public String toString() {
    return "AttemptView[" + attemptId + " " + state + " on " + nodeId + " in " + containerId + " progress "
        + progress + "]";
  }
}
