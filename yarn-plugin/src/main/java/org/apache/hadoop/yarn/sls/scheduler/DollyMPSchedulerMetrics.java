package org.apache.hadoop.yarn.sls.scheduler;

/**
 * SLS metrics for the DollyMP shim: SLS's generic scheduler metrics (cluster, queue and application
 * usage; allocate/handle timers). The shim has one queue, so nothing queue-specific is added.
 */
public class DollyMPSchedulerMetrics extends SchedulerMetrics {
  public DollyMPSchedulerMetrics() {
    super();
  }
}
