package io.dollymp.yarn.scheduler.queue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.QueueState;

/**
 * One queue as configured in {@code capacity-scheduler.xml} (the subset the shim reads, validated by
 * {@link QueueConfigReader}): percentages are of the parent queue, as CapacityScheduler reads them.
 */
public final class QueueSettings {
  final String path;
  final List<String> children;
  final float capacity;
  final float maximumCapacity;
  final float userLimitFactor;
  /**
   * Largest fraction of the queue's usable share (the larger of its guaranteed share and what it can reach now)
   * its ApplicationMasters may hold: the queue's own {@code maximum-am-resource-percent}, else the global
   * {@code yarn.scheduler.capacity.maximum-am-resource-percent}; NaN when neither is set (no per-queue AM limit).
   */
  final float maximumAmResourcePercent;
  final AccessControlList submitAcl;
  final AccessControlList administerAcl;
  final QueueState state;
  /**
   * After how many milliseconds of another queue's unmet guarantee this queue's originals may be preempted
   * (PreemptionKeys: CapacityScheduler's monitor and its max_wait_before_kill); 0 when the monitor is off or the
   * queue has {@code disable_preemption}.
   */
  final long preemptOriginalsAfterMs;
  /** {@code minimum-user-limit-percent}, in (0, 100]: 100 (the default) bounds users by the factor alone. */
  final float minimumUserLimitPercent;

  QueueSettings(String path, List<String> children, float capacity, float maximumCapacity, float userLimitFactor,
      float maximumAmResourcePercent, AccessControlList submitAcl, AccessControlList administerAcl,
      QueueState state, long preemptOriginalsAfterMs, float minimumUserLimitPercent) {
    this.path = path;
    this.children = Collections.unmodifiableList(new ArrayList<String>(children));
    this.capacity = capacity;
    this.maximumCapacity = maximumCapacity;
    this.userLimitFactor = userLimitFactor;
    this.maximumAmResourcePercent = maximumAmResourcePercent;
    this.submitAcl = submitAcl;
    this.administerAcl = administerAcl;
    this.state = state;
    this.preemptOriginalsAfterMs = preemptOriginalsAfterMs;
    this.minimumUserLimitPercent = minimumUserLimitPercent;
  }

  /** See the field. */
  public float minimumUserLimitPercent() {
    return minimumUserLimitPercent;
  }

  /** See the field: milliseconds, 0 for never. */
  public long preemptOriginalsAfterMs() {
    return preemptOriginalsAfterMs;
  }

  public String path() {
    return path;
  }

  /** The last component of the path ("a" for "root.a"). */
  public String name() {
    int dot = path.lastIndexOf('.');
    return dot < 0 ? path : path.substring(dot + 1);
  }

  public boolean isLeaf() {
    return children.isEmpty();
  }

  public List<String> children() {
    return children;
  }

  /** Guaranteed capacity, percent of the parent's. */
  public float capacity() {
    return capacity;
  }

  /** Maximum capacity, percent of the parent's. */
  public float maximumCapacity() {
    return maximumCapacity;
  }

  /** How many times the queue's guaranteed capacity one user may hold (-1: no limit). */
  public float userLimitFactor() {
    return userLimitFactor;
  }

  /** See the field: a fraction in (0, 1], or NaN for no per-queue AM limit. */
  public float maximumAmResourcePercent() {
    return maximumAmResourcePercent;
  }

  public QueueState state() {
    return state;
  }

  public AccessControlList submitAcl() {
    return submitAcl;
  }

  public AccessControlList administerAcl() {
    return administerAcl;
  }
}
