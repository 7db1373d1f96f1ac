package org.apache.hadoop.yarn.sls.scheduler;

import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;

/** SLS's own timers of the scheduler's event handling (package-private getters), read by the benchmark. */
public final class SlsTimers {
  private SlsTimers() {}

  /** {p50, p99, count} of NODE_UPDATE handling, ms (SLS's timer window, see yarn.sls.metrics.timer.window.size). */
  public static double[] nodeUpdateMs(SchedulerMetrics metrics) {
    Timer t = metrics == null ? null : metrics.getSchedulerHandleTimer(SchedulerEventType.NODE_UPDATE);
    if (t == null) {
      return new double[] {0, 0, 0};
    }
    Snapshot s = t.getSnapshot();
    return new double[] {s.getMedian() / 1e6, s.get99thPercentile() / 1e6, t.getCount()};
  }
}
