package io.dollymp.yarn.scheduler.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.jupiter.api.Test;

/** CapacityScheduler's preemption monitor keys: read per leaf, inherited, validated, kept from Hadoop's monitor. */
class PreemptionKeysTest {
  private static final String P = QueueConfigReader.PREFIX;
  private static final String CS_POLICY =
      "org.apache.hadoop.yarn.server.resourcemanager.monitor.capacity.ProportionalCapacityPreemptionPolicy";

  /** QueueTreeTest's two levels, eng with disable_preemption and its child adhoc with preemption back on. */
  private static Configuration tree() {
    Configuration c = QueueTreeTest.twoLevels();
    c.set(P + "root.eng.disable_preemption", "true");
    c.set(P + "root.eng.adhoc.disable_preemption", "FALSE");
    return c;
  }

  private static long after(QueueConfig q, String path) {
    return q.queues().get(path).preemptOriginalsAfterMs();
  }

  @Test
  void offUnlessTheMonitorRunsCapacitySchedulersPolicy() {
    Configuration c = tree();
    assertEquals(0L, after(QueueConfigReader.read(c), "root.ops"));
    c.setBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS, true);
    c.set(YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES, "com.example.OtherPolicy");
    assertEquals(0L, after(QueueConfigReader.read(c), "root.ops"));
    c.unset(YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES); // yarn-default.xml's: CapacityScheduler's policy
    QueueConfig q = QueueConfigReader.read(c);
    assertEquals(15_000L, after(q, "root.ops"));
    assertEquals(0L, after(q, "root.eng.batch"), "disable_preemption is inherited");
    assertEquals(15_000L, after(q, "root.eng.adhoc"), "a child may turn it back on");
    c.set(PreemptionKeys.MAX_WAIT, "2500");
    assertEquals(2500L, after(QueueConfigReader.read(c), "root.ops"));
  }

  @Test
  void badValuesAreRefusedByName() {
    Configuration c = tree();
    c.setBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS, true);
    c.set(PreemptionKeys.MAX_WAIT, "-5");
    String msg = assertThrows(IllegalArgumentException.class, () -> QueueConfigReader.read(c)).getMessage();
    assertTrue(msg.contains(PreemptionKeys.MAX_WAIT + "=-5: must be a whole number of milliseconds in [1, "), msg);
    c.set(PreemptionKeys.MAX_WAIT, "1000");
    c.set(P + "root.ops.disable_preemption", "maybe");
    msg = assertThrows(IllegalArgumentException.class, () -> QueueConfigReader.read(c)).getMessage();
    assertTrue(msg.contains(P + "root.ops.disable_preemption=maybe: expected true or false"), msg);
  }

  @Test
  void hadoopsMonitorManagerNeverSeesCapacitySchedulersPolicy() {
    Configuration c = new Configuration(false);
    assertFalse(PreemptionKeys.forMonitors(c).getBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS, false));
    c.setBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS, true);
    Configuration only = PreemptionKeys.forMonitors(c);
    assertFalse(only.getBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS, true), "nothing else to run");
    c.set(YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES, CS_POLICY + ", com.example.OtherPolicy");
    Configuration other = PreemptionKeys.forMonitors(c);
    assertTrue(other.getBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS, false));
    assertEquals("com.example.OtherPolicy", other.get(YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES));
    assertEquals(CS_POLICY + ", com.example.OtherPolicy", c.get(YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES),
        "the RM's own configuration is left as it was");
  }
}
