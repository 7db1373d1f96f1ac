package io.dollymp.yarn.bench;

import io.dollymp.yarn.scheduler.LatencyRecorder;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;

/** CapacityScheduler, unchanged, with its node-heartbeat handling timed like the shim's. */
public class TimedCapacityScheduler extends CapacityScheduler {
  static final LatencyRecorder HEARTBEAT = new LatencyRecorder();

  @Override
  public void handle(SchedulerEvent event) {
    if (event.getType() != SchedulerEventType.NODE_UPDATE) {
      super.handle(event);
      return;
    }
    long t0 = System.nanoTime();
    super.handle(event);
    HEARTBEAT.recordNanos(System.nanoTime() - t0);
  }
}
