package io.dollymp.yarn.scheduler.web;

import com.google.inject.Inject;
import io.dollymp.yarn.scheduler.DollyMPScheduler;
import java.util.Locale;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.MetricsOverviewTable;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.RmView;
import org.apache.hadoop.yarn.webapp.view.HtmlBlock;
import org.apache.hadoop.yarn.webapp.view.InfoBlock;

/**
 * The RM web UI's scheduler page for the shim (installed through
 * {@code yarn.http.rmwebapp.scheduler.page.class}): the cluster metrics table, then the shim's
 * session, usage and commit/fallback figures.
 */
public class DollyMPSchedulerPage extends RmView {
  @Override
  protected Class<? extends org.apache.hadoop.yarn.webapp.SubView> content() {
    return ShimBlock.class;
  }

  /** The figures, from the same DAO the REST API serves. */
  public static class ShimBlock extends HtmlBlock {
    private final ResourceManager rm;

    @Inject
    ShimBlock(ViewContext ctx, ResourceManager rm) {
      super(ctx);
      this.rm = rm;
    }

    @Override
    protected void render(Block html) {
      html.__(MetricsOverviewTable.class);
      if (!(rm.getResourceScheduler() instanceof DollyMPScheduler)) {
        html.p().__("The DollyMP scheduler is not the configured scheduler.").__();
        return;
      }
      DollyMPScheduler shim = (DollyMPScheduler) rm.getResourceScheduler();
      DollyMPSchedulerInfo s = new DollyMPSchedulerInfo(rm, shim);
      info("DollyMP Scheduler")
          .__("Decision service session:", s.getSessionState())
          .__("Nodes:", Integer.toString(s.getNumNodes()))
          .__("Containers:", Integer.toString(s.getNumContainers()))
          .__("Memory used / total (MB):", s.getUsedMemoryMB() + " / " + s.getTotalMemoryMB())
          .__("VCores used / total:", s.getUsedVirtualCores() + " / " + s.getTotalVirtualCores())
          .__("ApplicationMaster memory (MB):", Long.toString(s.getAmUsedMemoryMB()))
          .__("Containers committed from service plans:", Long.toString(s.getContainersCommitted()))
          .__("Proposals dropped on re-validation:", Long.toString(s.getProposalsDropped()))
          .__("Containers placed by the fallback policy:", Long.toString(s.getFallbackContainers()))
          .__("Time in fallback (s):", String.format(Locale.ROOT, "%.1f", s.getFallbackMillis() / 1000.0))
          .__("Heartbeat handling p99 (ms):", String.format(Locale.ROOT, "%.3f", s.getHeartbeatP99Millis()));
      html.__(InfoBlock.class);
    }
  }
}
