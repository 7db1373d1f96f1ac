package io.dollymp.yarn.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dollymp.proto.v1.QueueShareInfo;
import io.dollymp.yarn.scheduler.queue.QueueConfigReader;
import io.dollymp.yarn.scheduler.queue.QueueTree;
import io.dollymp.yarn.scheduler.queue.QueueTrees;
import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the shim tells the service of each leaf queue (StateBatch.queues): shares, user limits, AM percent and
 * preemption.
 */
class QueueShareInfoTest {
  @BeforeEach
  @AfterEach
  void resetMetrics() {
    QueueTrees.resetMetrics();
  }

  private static QueueTree tree(Configuration c) throws IOException {
    return QueueTrees.of(c, new Configuration(false));
  }

  @Test
  void eachLeafCarriesItsUserLimitFactorAndAmPercentOnTheWire() throws IOException {
    Configuration c = QueueTrees.conf("root.queues", "a,b,c", "root.a.capacity", "50", "root.a.maximum-capacity",
        "80", "root.a.user-limit-factor", "1.5", "root.a.maximum-am-resource-percent", "0.25", "root.b.capacity",
        "30", "root.b.user-limit-factor", "-1", "root.b.minimum-user-limit-percent", "25", "root.c.capacity", "20",
        "root.c.disable_preemption", "true");
    c.setBoolean("yarn.resourcemanager.scheduler.monitor.enable", true);
    QueueTree t = tree(c);
    QueueShareInfo a = BatchBuilder.shareInfo(t.queue("a"));
    assertEquals("root.a", a.getPath());
    assertEquals(0.5, a.getGuaranteed(), 1e-6);
    assertEquals(0.8, a.getMaximum(), 1e-6);
    assertEquals(1.5, a.getUserLimitFactor(), 1e-6);
    assertEquals(0.25, a.getMaximumAmResourcePercent(), 1e-6);
    QueueShareInfo b = BatchBuilder.shareInfo(t.queue("b"));
    assertEquals(-1.0, b.getUserLimitFactor(), 1e-6);
    assertEquals(0.0, b.getMaximumAmResourcePercent(), 0.0, "no key: 0, no per-queue AM limit");
    assertEquals(25.0, b.getMinimumUserLimitPercent(), 1e-6);
    assertEquals(100.0, a.getMinimumUserLimitPercent(), 1e-6, "CapacityScheduler's default");
    assertEquals(15_000L, a.getPreemptOriginalsAfterMs(), "the monitor is on: max_wait_before_kill's default");
    assertEquals(0L, BatchBuilder.shareInfo(t.queue("c")).getPreemptOriginalsAfterMs(), "disable_preemption");
    assertEquals(1.0, BatchBuilder.shareInfo(t.queue("c")).getUserLimitFactor(), 1e-6, "CapacityScheduler's default");
    // the global key is every leaf's default; it survives the wire's encoding
    c.set(QueueConfigReader.MAX_AM_PERCENT, "0.1");
    resetMetrics();
    QueueTree global = tree(c);
    QueueShareInfo parsed = QueueShareInfo.parseFrom(BatchBuilder.shareInfo(global.queue("b")).toByteArray());
    assertEquals(0.1, parsed.getMaximumAmResourcePercent(), 1e-6);
    assertEquals(0.25, BatchBuilder.shareInfo(global.queue("a")).getMaximumAmResourcePercent(), 1e-6, "its own key");
  }
}
