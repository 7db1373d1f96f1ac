package io.dollymp.yarn.compat;

import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.api.records.QueueStatistics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;

/**
 * The ResourceManager calls whose signatures differ between Hadoop lines, for the 3.3 line (compiled by the
 * hadoop-3.3 profile only; src/main/line-3.4 has the 3.4 and 3.5 lines'). In 3.3 the RM does not count unmanaged
 * ApplicationMasters apart (QueueMetrics has no such counters, the APP_ADDED event no such flag), and a
 * QueueInfo carries the queue's name only: no path, weight or maximum parallel applications.
 */
public final class LineApi {
  private LineApi() {}

  /** The Hadoop line this source set is compiled for, as VersionInfo's major.minor. */
  public static final String LINE = "3.3";

  /** The lines a jar of this source set starts on: 3.4's RM has other signatures for the calls here. */
  public static final List<String> RUNS_ON = Collections.singletonList("3.3");

  /** 3.3's APP_ADDED event does not say; its QueueMetrics would not count it apart either. */
  public static boolean isUnmanagedAM(AppAddedSchedulerEvent event) {
    return false;
  }

  public static boolean isUnmanagedAM(SchedulerApplication<?> app) {
    return false;
  }

  public static <T extends SchedulerApplicationAttempt> SchedulerApplication<T> newApplication(Queue queue,
      String user, boolean unmanagedAM) {
    return new SchedulerApplication<T>(queue, user);
  }

  public static void submitApp(QueueMetrics metrics, String user, boolean unmanagedAM) {
    metrics.submitApp(user);
  }

  public static void submitAppAttempt(QueueMetrics metrics, String user, boolean unmanagedAM) {
    metrics.submitAppAttempt(user);
  }

  /** A queue's QueueInfo; 3.3's has the leaf name only (its clients show no path). */
  public static QueueInfo queueInfo(String name, String path, float capacity, float maximumCapacity,
      float currentCapacity, List<QueueInfo> children, List<ApplicationReport> applications, QueueState state,
      Set<String> accessibleNodeLabels, String defaultNodeLabelExpression, QueueStatistics statistics,
      boolean preemptionDisabled) {
    return QueueInfo.newInstance(name, capacity, maximumCapacity, currentCapacity, children, applications, state,
        accessibleNodeLabels, defaultNodeLabelExpression, statistics, preemptionDisabled);
  }

  /** The user's groups (3.3 has no getGroupsSet). */
  public static Collection<String> groups(UserGroupInformation ugi) {
    return ugi.getGroups();
  }
}
