package io.dollymp.yarn.scheduler.web;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.queue.ShimQueue;
import java.util.ArrayList;
import java.util.List;
import javax.xml.bind.annotation.XmlAccessType;
import javax.xml.bind.annotation.XmlAccessorType;
import javax.xml.bind.annotation.XmlRootElement;
import javax.xml.bind.annotation.XmlType;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.dao.SchedulerInfo;

/**
 * What {@code /ws/v1/cluster/scheduler} answers for the shim (registered as a custom DAO through
 * {@code yarn.http.rmwebapp.custom.dao.classes}): the cluster's usage in memory and vcores, the queue tree, the
 * session with the decision service, and the commit/fallback counters.
 */
@XmlRootElement
@XmlType(name = "dollympScheduler")
@XmlAccessorType(XmlAccessType.FIELD)
public class DollyMPSchedulerInfo extends SchedulerInfo {
  protected String scheduler;
  protected String queueName;
  protected String sessionState;
  protected int numNodes;
  protected int numContainers;
  protected long totalMemoryMB;
  protected long totalVirtualCores;
  protected long usedMemoryMB;
  protected long usedVirtualCores;
  protected float usedCapacity;
  protected long amUsedMemoryMB;
  protected long amUsedVirtualCores;
  protected long containersCommitted;
  protected long proposalsDropped;
  protected long fallbackContainers;
  protected long fallbackMillis;
  protected double heartbeatP50Millis;
  protected double heartbeatP99Millis;
  /** The queue tree, root first, each parent before its children. */
  protected List<DollyMPQueueInfo> queues = new ArrayList<DollyMPQueueInfo>();

  public DollyMPSchedulerInfo() {
    // JAXB
  }

  public DollyMPSchedulerInfo(ResourceManager rm, DollyMPScheduler shim) {
    super(rm);
    this.schedulerName = "DollyMP Scheduler";
    this.scheduler = schedulerName;
    this.queueName = "root";
    this.sessionState = shim.sessionState().name();
    for (SchedulerNode n : shim.nodes()) {
      numNodes++;
      numContainers += n.getNumContainers();
      Resource total = n.getTotalResource();
      Resource used = n.getAllocatedResource();
      totalMemoryMB += total.getMemorySize();
      totalVirtualCores += total.getVirtualCores();
      usedMemoryMB += used.getMemorySize();
      usedVirtualCores += used.getVirtualCores();
    }
    this.usedCapacity = (float) Math.max(totalMemoryMB == 0 ? 0 : (double) usedMemoryMB / totalMemoryMB,
        totalVirtualCores == 0 ? 0 : (double) usedVirtualCores / totalVirtualCores);
    Resource am = shim.amUsed();
    this.amUsedMemoryMB = am.getMemorySize();
    this.amUsedVirtualCores = am.getVirtualCores();
    this.containersCommitted = shim.proposalsCommitted();
    this.proposalsDropped = shim.proposalsDropped();
    this.fallbackContainers = shim.fallbackContainers();
    this.fallbackMillis = shim.fallbackMs();
    this.heartbeatP50Millis = shim.heartbeatLatency().quantileMs(0.5);
    this.heartbeatP99Millis = shim.heartbeatLatency().quantileMs(0.99);
    for (ShimQueue q : shim.queues().all()) {
      queues.add(new DollyMPQueueInfo(q));
    }
  }

  public List<DollyMPQueueInfo> getQueues() {
    return queues;
  }

  public String getSessionState() {
    return sessionState;
  }

  public int getNumNodes() {
    return numNodes;
  }

  public int getNumContainers() {
    return numContainers;
  }

  public long getTotalMemoryMB() {
    return totalMemoryMB;
  }

  public long getTotalVirtualCores() {
    return totalVirtualCores;
  }

  public long getUsedMemoryMB() {
    return usedMemoryMB;
  }

  public long getUsedVirtualCores() {
    return usedVirtualCores;
  }

  public float getUsedCapacity() {
    return usedCapacity;
  }

  public long getAmUsedMemoryMB() {
    return amUsedMemoryMB;
  }

  public long getContainersCommitted() {
    return containersCommitted;
  }

  public long getProposalsDropped() {
    return proposalsDropped;
  }

  public long getFallbackContainers() {
    return fallbackContainers;
  }

  public long getFallbackMillis() {
    return fallbackMillis;
  }

  public double getHeartbeatP99Millis() {
    return heartbeatP99Millis;
  }
}
