package io.dollymp.yarn.compat;

import java.util.Arrays;
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
 * The ResourceManager calls whose signatures differ between Hadoop lines, for the 3.4 and 3.5 lines (this
 * source set is compiled by the default and the hadoop-3.5 profiles; src/main/line-3.3 has the 3.3 line's).
 * Since 3.4 the RM counts unmanaged ApplicationMasters apart and a queue's
 * QueueInfo carries its full path, weight and maximum parallel applications.
 */
public final class LineApi {
  private LineApi() {}

  /** The Hadoop line this source set is compiled for, as VersionInfo's major.minor. */
  public static final String LINE = "3.4";

  /**
   * The lines a jar of this source set starts on: 3.4 and 3.5 have the same scheduler API for the shim (the
   * one difference, the renamed SchedulerInvalidResourceRequestException, is resolved by name at run time).
   */
  public static final List<String> RUNS_ON = Collections.unmodifiableList(Arrays.asList("3.4", "3.5"));

  public static boolean isUnmanagedAM(AppAddedSchedulerEvent event) {
    return event.isUnmanagedAM();
  }

  public static boolean isUnmanagedAM(SchedulerApplication<?> app) {
    return app.isUnmanagedAM();
  }

  public static <T extends SchedulerApplicationAttempt> SchedulerApplication<T> newApplication(Queue queue,
      String user, boolean unmanagedAM) {
    return new SchedulerApplication<T>(queue, user, unmanagedAM);
  }

  public static void submitApp(QueueMetrics metrics, String user, boolean unmanagedAM) {
    metrics.submitApp(user, unmanagedAM);
  }

  public static void submitAppAttempt(QueueMetrics metrics, String user, boolean unmanagedAM) {
    metrics.submitAppAttempt(user, unmanagedAM);
  }

  /** A queue's QueueInfo: {@code weight} -1 (capacities, not weights) and no limit on parallel applications. */
  public static QueueInfo queueInfo(String name, String path, float capacity, float maximumCapacity,
      float currentCapacity, List<QueueInfo> children, List<ApplicationReport> applications, QueueState state,
      Set<String> accessibleNodeLabels, String defaultNodeLabelExpression, QueueStatistics statistics,
      boolean preemptionDisabled) {
    return QueueInfo.newInstance(name, path, capacity, maximumCapacity, currentCapacity, children, applications,
        state, accessibleNodeLabels, defaultNodeLabelExpression, statistics, preemptionDisabled, -1.0f,
        Integer.MAX_VALUE);
  }

  /** The user's groups (getGroups is deprecated since 3.4 for this). */
  public static Collection<String> groups(UserGroupInformation ugi) {
    return ugi.getGroupsSet();
  }
}
