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
  /** Largest share of the queue's maximum capacity its ApplicationMasters may hold; NaN when not set. */
  final float maximumAmResourcePercent;
  final AccessControlList submitAcl;
  final AccessControlList administerAcl;
  final QueueState state;

  QueueSettings(String path, List<String> children, float capacity, float maximumCapacity, float userLimitFactor,
      float maximumAmResourcePercent, AccessControlList submitAcl, AccessControlList administerAcl,
      QueueState state) {
    this.path = path;
    this.children = Collections.unmodifiableList(new ArrayList<String>(children));
    this.capacity = capacity;
    this.maximumCapacity = maximumCapacity;
    this.userLimitFactor = userLimitFactor;
    this.maximumAmResourcePercent = maximumAmResourcePercent;
    this.submitAcl = submitAcl;
    this.administerAcl = administerAcl;
    this.state = state;
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
