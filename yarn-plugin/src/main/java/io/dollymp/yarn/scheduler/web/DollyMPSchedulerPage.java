package io.dollymp.yarn.scheduler.web;

import com.google.inject.Inject;
import io.dollymp.yarn.scheduler.DollyMPScheduler;
import java.util.Locale;
import org.apache.hadoop.yarn.webapp.ResponseInfo;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.MetricsOverviewTable;
import org.apache.hadoop.yarn.server.resourcemanager.webapp.RmView;
import org.apache.hadoop.yarn.webapp.hamlet2.Hamlet;
import org.apache.hadoop.yarn.webapp.view.HtmlBlock;
import org.apache.hadoop.yarn.webapp.view.InfoBlock;

/**
 * The RM web UI's scheduler page for the shim (installed through
 * {@code yarn.http.rmwebapp.scheduler.page.class}): the cluster metrics table, then the shim's
 * session, usage and commit/fallback figures, and the queue tree.
 */
public class DollyMPSchedulerPage extends RmView {
  @Override
  protected Class<? extends org.apache.hadoop.yarn.webapp.SubView> content() {
    return ShimBlock.class;
  }

  static final int MAX_APP_LINKS = 100;

  private static String pct(float v) {
    return String.format(Locale.ROOT, "%.1f%%", v);
  }

  /** The figures and the queue tree, from the same DAO the REST API serves. */
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
      ResponseInfo block = info("DollyMP Scheduler");
      String ui = shim.uiAddress();
      if (!ui.isEmpty()) {
        block.__("Decision service page:", ui + "/ui/", ui + "/ui/");
      }
      block
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
      if (!ui.isEmpty()) {
        int shown = 0;
        for (org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp app : rm.getRMContext().getRMApps().values()) {
          if (app.isAppFinalStateStored() || shown++ >= MAX_APP_LINKS) {
            continue;
          }
          String id = app.getApplicationId().toString();
          block.__("Decisions of " + id + ":", shim.pageUrl(id), "timeline, clones, why it waits");
        }
      }
      html.__(InfoBlock.class);
      Hamlet.TBODY<Hamlet.TABLE<Hamlet>> rows = html.table("#dollymp-queues").thead().tr()
          .th("Queue").th("State").th("Capacity").th("Maximum capacity").th("Absolute capacity")
          .th("Used capacity").th("Applications").__().__().tbody();
      for (DollyMPQueueInfo q : s.getQueues()) {
        rows.tr().td(q.getQueuePath()).td(q.getState()).td(pct(q.getCapacity())).td(pct(q.getMaxCapacity()))
            .td(pct(q.getAbsoluteCapacity())).td(pct(q.getUsedCapacity()))
            .td(Integer.toString(q.getNumApplications())).__();
      }
      rows.__().__();
    }
  }
}
