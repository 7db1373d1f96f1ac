package io.dollymp.yarn.scheduler.queue;

import java.io.IOException;
import java.util.Collections;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;

/** Queue trees for unit tests: read from a configuration and applied, with the queue metrics reset around them. */
public final class QueueTrees {
  private QueueTrees() {
  }

  /** A configuration of CapacityScheduler keys: pairs of a key (after {@code yarn.scheduler.capacity.}) and value. */
  public static Configuration conf(String... keysAndValues) {
    Configuration c = new Configuration(false);
    for (int i = 0; i + 1 < keysAndValues.length; i += 2) {
      c.set(QueueConfigReader.PREFIX + keysAndValues[i], keysAndValues[i + 1]);
    }
    return c;
  }

  /** Forgets every queue's metrics (a test's tree registers them again). */
  public static void resetMetrics() {
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.shutdown();
  }

  /** The tree of {@code c}'s queue keys on a 10 GiB, 10-vcore cluster, ACLs from {@code aclConf}. */
  public static QueueTree of(Configuration c, Configuration aclConf) throws IOException {
    QueueTree t = new QueueTree(new Configuration(false), () -> Resource.newInstance(10240, 10), x -> { });
    t.setAcls(aclConf);
    t.apply(QueueConfigReader.read(c), Collections.<String, Integer>emptyMap());
    return t;
  }
}
