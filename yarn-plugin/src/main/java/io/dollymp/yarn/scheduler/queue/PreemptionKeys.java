package io.dollymp.yarn.scheduler.queue;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * CapacityScheduler's preemption monitor, as the shim carries it out. With
 * {@code yarn.resourcemanager.scheduler.monitor.enable} and {@code ProportionalCapacityPreemptionPolicy} among the
 * monitor policies (yarn-default.xml's choice), the decision service preempts original containers of queues above
 * their guarantee for queues below theirs, once those have waited {@value #MAX_WAIT} (default 15 s); a queue with
 * {@code disable_preemption} keeps its originals. Hadoop's own policy only runs under CapacityScheduler (it
 * would stop the RM), so the shim hands Hadoop's monitor manager the configuration without it.
 */
public final class PreemptionKeys {
  public static final String MAX_WAIT = "yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill";
  static final long DEFAULT_MAX_WAIT_MS = 15_000L;
  static final long MAX_MAX_WAIT_MS = 86_400_000L; // a day
  private static final String CAPACITY_POLICY = "ProportionalCapacityPreemptionPolicy";

  private PreemptionKeys() {}

  private static boolean isCapacityPolicy(String cls) {
    return cls.equals(CAPACITY_POLICY) || cls.endsWith("." + CAPACITY_POLICY);
  }

  /** The monitor policies configured (yarn-default.xml's when unset: CapacityScheduler's preemption policy). */
  private static String[] policies(Configuration conf) {
    String[] p = conf.getTrimmedStrings(YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES);
    return p.length == 0 && conf.get(YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES) == null
        ? new String[] {"org.apache.hadoop.yarn.server.resourcemanager.monitor.capacity." + CAPACITY_POLICY} : p;
  }

  /** Whether the configuration turns CapacityScheduler's preemption monitor on. */
  static boolean capacityPreemptionOn(Configuration conf) {
    if (!conf.getBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_ENABLE_MONITORS)) {
      return false;
    }
    for (String p : policies(conf)) {
      if (isCapacityPolicy(p)) {
        return true;
      }
    }
    return false;
  }

  /**
   * After how many milliseconds of a queue's unmet guarantee the originals of queues with preemption on may be
   * preempted: {@value #MAX_WAIT} when the monitor is on, else 0 (never). A bad value is added to
   * {@code errors}, naming the key and its range.
   */
  static long originalsAfterMs(Configuration conf, List<String> errors) {
    if (!capacityPreemptionOn(conf)) {
      return 0L;
    }
    String raw = conf.getTrimmed(MAX_WAIT);
    if (raw == null || raw.isEmpty()) {
      return DEFAULT_MAX_WAIT_MS;
    }
    long v;
    try {
      v = Long.parseLong(raw);
    } catch (NumberFormatException e) {
      v = -1L;
    }
    if (v < 1L || v > MAX_MAX_WAIT_MS) {
      errors.add(MAX_WAIT + "=" + raw + ": must be a whole number of milliseconds in [1, " + MAX_MAX_WAIT_MS + "]");
      return DEFAULT_MAX_WAIT_MS;
    }
    return v;
  }

  /** A queue's {@code disable_preemption}: true or false (any case), else its parent's value. */
  static boolean disabled(Configuration conf, String key, boolean parent, List<String> errors) {
    String raw = conf.getTrimmed(key);
    if (raw == null || raw.isEmpty()) {
      return parent;
    }
    String v = raw.toLowerCase(Locale.ROOT);
    if (!v.equals("true") && !v.equals("false")) {
      errors.add(key + "=" + raw + ": expected true or false");
      return parent;
    }
    return v.equals("true");
  }

  /** {@code conf} for Hadoop's scheduling monitor manager: CapacityScheduler's preemption policy taken out. */
  public static Configuration forMonitors(Configuration conf) {
    if (!conf.getBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_ENABLE_MONITORS)) {
      return conf;
    }
    List<String> kept = new ArrayList<String>();
    for (String p : policies(conf)) {
      if (!isCapacityPolicy(p)) {
        kept.add(p);
      }
    }
    Configuration out = new Configuration(conf);
    out.set(YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES, String.join(",", kept));
    out.setBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS, !kept.isEmpty());
    return out;
  }
}
