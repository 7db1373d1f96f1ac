package io.dollymp.yarn.scheduler;

import io.dollymp.yarn.scheduler.client.SessionStateMachine;
import java.util.function.LongSupplier;
import org.apache.hadoop.metrics2.MetricsCollector;
import org.apache.hadoop.metrics2.MetricsInfo;
import org.apache.hadoop.metrics2.MetricsRecordBuilder;
import org.apache.hadoop.metrics2.MetricsSource;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.metrics2.lib.Interns;

/**
 * The shim's figures as a Hadoop metrics2 source ("DollyMPShim": visible at the RM's /jmx and to
 * every configured metrics sink): session state, fallback time, proposals committed and dropped,
 * containers placed by the fallback, node heartbeats handled and their handling time on the RM
 * event thread.
 */
final class ShimMetrics implements MetricsSource {
  static final String NAME = "DollyMPShim";

  private final SessionStateMachine session;
  private final PlanBook planBook;
  private final LatencyRecorder heartbeat;
  private final LongSupplier nodeUpdates;
  private final LongSupplier fallbackContainers;
  private final LongSupplier blacklistSkips;

  ShimMetrics(SessionStateMachine session, PlanBook planBook, LatencyRecorder heartbeat, LongSupplier nodeUpdates,
      LongSupplier fallbackContainers, LongSupplier blacklistSkips) {
    this.session = session;
    this.planBook = planBook;
    this.heartbeat = heartbeat;
    this.nodeUpdates = nodeUpdates;
    this.fallbackContainers = fallbackContainers;
    this.blacklistSkips = blacklistSkips;
  }

  void register() {
    DefaultMetricsSystem.instance().unregisterSource(NAME);
    DefaultMetricsSystem.instance().register(NAME, "DollyMP scheduler shim", this);
  }

  void unregister() {
    DefaultMetricsSystem.instance().unregisterSource(NAME);
  }

  private static MetricsInfo info(String name, String description) {
    return Interns.info(name, description);
  }

  @Override
  public void getMetrics(MetricsCollector collector, boolean all) {
    MetricsRecordBuilder rb = collector.addRecord(NAME).setContext("scheduler")
        .tag(info("SessionState", "session with the decision service"), session.state().name())
        .addGauge(info("FallbackMillis", "time spent in FALLBACK"), session.fallbackMs())
        .addCounter(info("ProposalsReceived", "placements received from the service"), planBook.received.get())
        .addCounter(info("ContainersCommitted", "containers committed from service placements"),
            planBook.committed.get())
        .addCounter(info("CloneContainersCommitted", "of those, containers the service placed as clones"),
            planBook.clonesCommitted.get())
        .addCounter(info("ContainersPreempted", "containers preempted at the service's request (kill list)"),
            planBook.killsCommitted.get())
        .addCounter(info("KillsRefused", "kill requests refused: stale plan, unknown or finished, AM container"),
            planBook.killsRefused.get())
        .addCounter(info("FallbackContainers", "containers placed by the fallback policy"),
            fallbackContainers.getAsLong())
        .addCounter(info("FallbackBlacklistSkips", "times the fallback kept an application off a node it blacklisted"),
            blacklistSkips.getAsLong())
        .addCounter(info("NodeUpdates", "node heartbeats handled"), nodeUpdates.getAsLong())
        .addGauge(info("HeartbeatP50Millis", "node heartbeat handling p50 on the event thread"),
            heartbeat.quantileMs(0.5))
        .addGauge(info("HeartbeatP99Millis", "node heartbeat handling p99 on the event thread"),
            heartbeat.quantileMs(0.99));
    planBook.dropped.forEach((kind, n) ->
        rb.addCounter(info("Dropped_" + kind.name(), "proposals dropped: " + kind.name()), n.get()));
  }
}
