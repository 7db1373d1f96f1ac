package io.dollymp.yarn.scheduler;

import io.dollymp.proto.v1.ContainerExitKind;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;

/** Stateless translations between the ResourceManager's terms and the shim's. */
final class YarnGlue {
  private YarnGlue() {}

  /**
   * Hadoop's RM web UI and REST API know only its own schedulers: without a scheduler page the UI's
   * scheduler page fails, and /ws/v1/cluster/scheduler answers "Unknown scheduler". Unless the
   * operator configured them, point Hadoop's plug-in keys at the shim's page, DAO and web services.
   */
  static void installWebHooks(Configuration conf) {
    setIfUnset(conf, "yarn.http.rmwebapp.scheduler.page.class",
        "io.dollymp.yarn.scheduler.web.DollyMPSchedulerPage");
    setIfUnset(conf, "yarn.webapp.custom.webservice.class", "io.dollymp.yarn.scheduler.web.DollyMPWebServices");
    setIfUnset(conf, "yarn.http.rmwebapp.custom.dao.classes", "io.dollymp.yarn.scheduler.web.DollyMPSchedulerInfo");
  }

  private static void setIfUnset(Configuration conf, String key, String value) {
    if (conf.get(key) == null) {
      conf.set(key, value);
      DollyMPScheduler.LOG.info("DollyMP: {} = {}", key, value);
    }
  }

  /** How a container ended, in the service's terms, from its final status and the RM's completion event. */
  static ContainerExitKind exitKind(ContainerStatus status, RMContainerEventType event) {
    if (event == RMContainerEventType.RELEASED) {
      return ContainerExitKind.CONTAINER_EXIT_RELEASED;
    }
    if (event == RMContainerEventType.EXPIRE) {
      return ContainerExitKind.CONTAINER_EXIT_EXPIRED;
    }
    int code = status.getExitStatus();
    if (SchedulerUtils.LOST_CONTAINER.equals(status.getDiagnostics())) {
      return ContainerExitKind.CONTAINER_EXIT_LOST;
    }
    if (code == ContainerExitStatus.SUCCESS) {
      return ContainerExitKind.CONTAINER_EXIT_SUCCESS;
    }
    if (code == ContainerExitStatus.PREEMPTED) {
      return ContainerExitKind.CONTAINER_EXIT_PREEMPTED;
    }
    if (code == ContainerExitStatus.KILLED_BY_APPMASTER || code == ContainerExitStatus.KILLED_BY_RESOURCEMANAGER
        || code == ContainerExitStatus.ABORTED || event == RMContainerEventType.KILL) {
      return ContainerExitKind.CONTAINER_EXIT_KILLED;
    }
    return ContainerExitKind.CONTAINER_EXIT_FAILED;
  }
}
