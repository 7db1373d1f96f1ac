package io.dollymp.yarn.scheduler.web;

import com.google.inject.Inject;
import com.google.inject.Singleton;
import io.dollymp.yarn.scheduler.DollyMPScheduler;
import javax.ws.rs.Path;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.RMWSConsts;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.RMWebServices;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.dao.SchedulerTypeInfo;

/**
 * The RM's REST API with one answer added: {@code GET /ws/v1/cluster/scheduler} describes the
 * DollyMP shim instead of failing with "Unknown scheduler configured" (Hadoop's RMWebServices knows
 * only its own three schedulers). Installed through {@code yarn.webapp.custom.webservice.class};
 * every other endpoint is Hadoop's, unchanged.
 */
@Singleton
@Path(RMWSConsts.RM_WEB_SERVICE_PATH)
public class DollyMPWebServices extends RMWebServices {
  private final ResourceManager resourceManager;

  @Inject
  public DollyMPWebServices(ResourceManager rm, Configuration conf) {
    super(rm, conf);
    this.resourceManager = rm;
  }

  @Override
  public SchedulerTypeInfo getSchedulerInfo() {
    ResourceScheduler rs = resourceManager.getResourceScheduler();
    if (rs instanceof DollyMPScheduler) {
      return new SchedulerTypeInfo(new DollyMPSchedulerInfo(resourceManager, (DollyMPScheduler) rs));
    }
    return super.getSchedulerInfo();
  }
}
