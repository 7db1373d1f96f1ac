package io.dollymp.yarn.compat;

import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.scheduler.ShimConfig;
import org.apache.hadoop.util.VersionInfo;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;

/**
 * Run by {@link HadoopVersionCheckTest} in a JVM of its own: a real ResourceManager with the shim as its
 * scheduler and the decision service at {@code 127.0.0.1:<args[0]>} is initialised (not started); then it
 * prints, one {@code key=value} a line, the Hadoop version it runs on, how init and start
 * went and the state the RM was left in.
 */
public final class RmInitProbe {
  private RmInitProbe() {}

  public static void main(String[] args) {
    YarnConfiguration conf = new YarnConfiguration();
    conf.setClass(YarnConfiguration.RM_SCHEDULER, DollyMPScheduler.class, ResourceScheduler.class);
    conf.set(ShimConfig.SERVICE_ADDRESS, "127.0.0.1:" + args[0]);
    conf.set(YarnConfiguration.RM_ADDRESS, "127.0.0.1:0");
    conf.set(YarnConfiguration.RM_SCHEDULER_ADDRESS, "127.0.0.1:0");
    conf.set(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, "127.0.0.1:0");
    conf.set(YarnConfiguration.RM_ADMIN_ADDRESS, "127.0.0.1:0");
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "127.0.0.1:0");
    System.out.println("version=" + VersionInfo.getVersion());
    ResourceManager rm = new ResourceManager();
    try {
      rm.init(conf);
      System.out.println("init=ok");
    } catch (RuntimeException e) {
      StringBuilder why = new StringBuilder();
      for (Throwable t = e; t != null; t = t.getCause()) {
        why.append(" | ").append(t.getClass().getName()).append(": ").append(t.getMessage());
      }
      System.out.println("init=refused" + why);
    }
    System.out.println("state=" + rm.getServiceState());
    System.out.println("webhook=" + conf.get("yarn.http.rmwebapp.scheduler.page.class"));
    rm.stop();
    System.out.flush();
    System.exit(0);
  }
}
