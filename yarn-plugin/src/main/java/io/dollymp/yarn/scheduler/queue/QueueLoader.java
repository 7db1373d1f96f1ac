package io.dollymp.yarn.scheduler.queue;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.conf.ConfigurationProvider;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;

/**
 * Where the shim's configuration comes from. At start-up: the RM's configuration, with
 * {@code capacity-scheduler.xml} over it (read through the RM's configuration provider, as
 * CapacityScheduler reads it, or from {@value #QUEUES_FILE} when set; keys set in code on the RM's
 * configuration win over the file, as in CapacityScheduler). On {@code -refreshQueues}
 * the RM hands over a freshly read {@code yarn-site.xml}; its scheduler, monitor and ACL keys replace the
 * start-up values (a key it no longer has keeps its start-up value) and the queue file is read again.
 */
public final class QueueLoader {
  /** An explicit capacity-scheduler.xml-format file for the queue tree (instead of the one on the classpath). */
  public static final String QUEUES_FILE = "yarn.scheduler.dollymp.queues.file";
  public static final String CS_FILE = "capacity-scheduler.xml";

  private QueueLoader() {}

  /** {@code base} with {@code reloaded}'s scheduler and ACL keys over it, then the queue file over both. */
  public static Configuration layered(Configuration base, Configuration reloaded, ConfigurationProvider provider)
      throws IOException {
    Configuration out = new Configuration(base);
    if (reloaded != null) {
      for (Map.Entry<String, String> e : reloaded) {
        String k = e.getKey();
        if (k.startsWith("yarn.scheduler.") || k.startsWith("yarn.resourcemanager.scheduler.monitor.")
            || k.startsWith("yarn.resourcemanager.monitor.") || k.equals(YarnConfiguration.YARN_ACL_ENABLE)
            || k.equals(YarnConfiguration.YARN_ADMIN_ACL)) {
          out.set(k, e.getValue());
        }
      }
    }
    for (Map.Entry<String, String> e : queueFile(out, provider)) {
      if (!programmatic(base, e.getKey())) {
        out.set(e.getKey(), e.getValue());
      }
    }
    return out;
  }

  /**
   * Whether {@code key} was set in code on the RM's configuration (an embedded or test RM), not read from a
   * file. Such a key beats the queue file, as it does in CapacityScheduler's configuration, where the file is a
   * resource under the configuration's programmatic overlay.
   */
  private static boolean programmatic(Configuration base, String key) {
    String[] sources = base.getPropertySources(key);
    return sources != null && Arrays.asList(sources).contains("programmatically");
  }

  private static Configuration queueFile(Configuration conf, ConfigurationProvider provider) throws IOException {
    Configuration file = new Configuration(false);
    String explicit = conf.getTrimmed(QUEUES_FILE, "");
    if (!explicit.isEmpty()) {
      File f = new File(explicit);
      if (!f.isAbsolute() || !f.isFile() || !f.canRead()) {
        throw new IOException(QUEUES_FILE + "=" + explicit + ": not an absolute path of a readable file");
      }
      file.addResource(new Path(f.toURI()));
      file.size(); // parse now, so that a malformed file fails here
      return file;
    }
    InputStream in;
    try {
      in = provider == null ? conf.getConfResourceAsInputStream(CS_FILE)
          : provider.getConfigurationInputStream(conf, CS_FILE);
    } catch (YarnException e) {
      throw new IOException(CS_FILE + ": " + e.getMessage(), e);
    }
    if (in == null) {
      return file; // no file: the stock tree (root.default), or queues set in yarn-site.xml
    }
    try {
      file.addResource(in, CS_FILE);
      file.size();
    } finally {
      in.close();
    }
    return file;
  }
}
