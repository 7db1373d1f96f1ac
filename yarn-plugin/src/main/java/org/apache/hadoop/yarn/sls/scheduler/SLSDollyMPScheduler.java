package org.apache.hadoop.yarn.sls.scheduler;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.sls.SLSRunner;

/**
 * Lets Hadoop's Scheduler Load Simulator run the DollyMP shim: set
 * {@code yarn.resourcemanager.scheduler.class} to this class in SLS's yarn-site.xml (SLS passes
 * any scheduler class it does not know through unchanged and casts it to SchedulerWrapper). SLS's
 * metrics and timers wrap the shim's allocate and event handling; the shim itself is unchanged.
 * Lives in SLS's package because SLSSchedulerCommons' stopMetrics is package-private.
 */
public class SLSDollyMPScheduler extends DollyMPScheduler implements SchedulerWrapper {
  private final SLSSchedulerCommons commons;
  private SLSRunner runner;

  public SLSDollyMPScheduler() {
    commons = new SLSSchedulerCommons(this);
  }

  @Override
  public synchronized void setConf(Configuration conf) {
    super.setConf(conf);
    // SchedulerMetrics looks up the metrics class under the scheduler class's name.
    if (conf.get(DollyMPScheduler.class.getName()) == null) {
      conf.set(DollyMPScheduler.class.getName(), DollyMPSchedulerMetrics.class.getName());
    }
    commons.initMetrics(DollyMPScheduler.class, conf);
  }

  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> resourceRequests,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> containerIds, List<String> blacklistAdditions,
      List<String> blacklistRemovals, ContainerUpdates updateRequests) {
    return commons.allocate(attemptId, resourceRequests, schedulingRequests, containerIds, blacklistAdditions,
        blacklistRemovals, updateRequests);
  }

  @Override
  public void handle(SchedulerEvent event) {
    commons.handle(event);
  }

  @Override
  public void propagatedHandle(SchedulerEvent event) {
    super.handle(event);
  }

  @Override
  public Allocation allocatePropagated(ApplicationAttemptId attemptId, List<ResourceRequest> resourceRequests,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> containerIds, List<String> blacklistAdditions,
      List<String> blacklistRemovals, ContainerUpdates updateRequests) {
    return super.allocate(attemptId, resourceRequests, schedulingRequests, containerIds, blacklistAdditions,
        blacklistRemovals, updateRequests);
  }

  @Override
  public void serviceStop() throws Exception {
    commons.stopMetrics();
    super.serviceStop();
  }

  /** The shim has one queue; every SLS queue name maps to it. */
  @Override
  public String getRealQueueName(String queue) {
    return "default";
  }

  /** SLS traces name their own queues (e.g. sls_queue_1); under the simulator each runs in the one queue. */
  @Override
  protected boolean acceptsQueue(String queueName) {
    return true;
  }

  @Override
  public SchedulerMetrics getSchedulerMetrics() {
    return commons.getSchedulerMetrics();
  }

  @Override
  public Tracker getTracker() {
    return commons.getTracker();
  }

  @Override
  public void setSLSRunner(SLSRunner slsRunner) {
    this.runner = slsRunner;
  }

  @Override
  public SLSRunner getSLSRunner() {
    return runner;
  }
}
