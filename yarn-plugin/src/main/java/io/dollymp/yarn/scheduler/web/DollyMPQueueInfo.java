package io.dollymp.yarn.scheduler.web;

import io.dollymp.yarn.scheduler.queue.ShimQueue;
import javax.xml.bind.annotation.XmlAccessType;
import javax.xml.bind.annotation.XmlAccessorType;
import javax.xml.bind.annotation.XmlType;

/** One queue of the tree in the scheduler REST answer and page (percentages as CapacityScheduler shows them). */
@XmlType(name = "dollympQueue")
@XmlAccessorType(XmlAccessType.FIELD)
public class DollyMPQueueInfo {
  protected String queuePath;
  protected String queueName;
  protected String parentPath;
  protected boolean leaf;
  protected String state;
  /** Guaranteed and maximum capacity, percent of the parent's. */
  protected float capacity;
  protected float maxCapacity;
  /** The same, percent of the cluster. */
  protected float absoluteCapacity;
  protected float absoluteMaxCapacity;
  /** Used resources, percent of the guaranteed capacity (dominant resource). */
  protected float usedCapacity;
  protected float userLimitFactor;
  protected long allocatedMemoryMB;
  protected long allocatedVirtualCores;
  protected int numApplications;

  public DollyMPQueueInfo() {
    // JAXB
  }

  DollyMPQueueInfo(ShimQueue q) {
    this.queuePath = q.getQueuePath();
    this.queueName = q.getQueueName();
    this.parentPath = q.parent() == null ? "" : q.parent().getQueuePath();
    this.leaf = q.isLeaf();
    this.state = q.effectiveState().name();
    this.capacity = q.settings().capacity();
    this.maxCapacity = q.settings().maximumCapacity();
    this.absoluteCapacity = q.absoluteCapacity() * 100f;
    this.absoluteMaxCapacity = q.absoluteMaximumCapacity() * 100f;
    this.usedCapacity = q.usedCapacity() * 100f;
    this.userLimitFactor = q.settings().userLimitFactor();
    this.allocatedMemoryMB = q.getMetrics().getAllocatedMB();
    this.allocatedVirtualCores = q.getMetrics().getAllocatedVirtualCores();
    this.numApplications = q.getMetrics().getAppsRunning() + q.getMetrics().getAppsPending();
  }

  public String getQueuePath() {
    return queuePath;
  }

  public boolean isLeaf() {
    return leaf;
  }

  public String getState() {
    return state;
  }

  public float getCapacity() {
    return capacity;
  }

  public float getMaxCapacity() {
    return maxCapacity;
  }

  public float getAbsoluteCapacity() {
    return absoluteCapacity;
  }

  public float getAbsoluteMaxCapacity() {
    return absoluteMaxCapacity;
  }

  public float getUsedCapacity() {
    return usedCapacity;
  }

  public int getNumApplications() {
    return numApplications;
  }
}
