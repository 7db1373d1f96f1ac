package io.dollymp.yarn.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivilegedExceptionAction;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * Mini clusters with queue ACLs: the RM reads {@code yarn-site.xml} and {@code capacity-scheduler.xml} from
 * a file-system store (as an HA pair does, so {@code -refreshQueues} re-reads real files), ACLs are on and
 * the test's own user is the YARN admin; calls are made as other users.
 */
public final class AclClusters {
  private AclClusters() {}

  /** {@link MiniClusters#shimConf} with the store at {@code store} and ACLs on. */
  public static Configuration conf(int grpcPort, Path store) throws IOException {
    Configuration conf = MiniClusters.shimConf(grpcPort);
    conf.set(YarnConfiguration.RM_CONFIGURATION_PROVIDER_CLASS,
        "org.apache.hadoop.yarn.FileSystemBasedConfigurationProvider");
    conf.set(YarnConfiguration.FS_BASED_RM_CONF_STORE, store.toUri().toString());
    conf.setBoolean(YarnConfiguration.YARN_ACL_ENABLE, true);
    conf.set(YarnConfiguration.YARN_ADMIN_ACL, UserGroupInformation.getCurrentUser().getShortUserName());
    return conf;
  }

  /** Writes a Hadoop configuration file of the name, value pairs {@code keyValues}. */
  public static void writeSite(Path file, String... keyValues) throws IOException {
    StringBuilder xml = new StringBuilder("<?xml version=\"1.0\"?>\n<configuration>\n");
    for (int i = 0; i < keyValues.length; i += 2) {
      xml.append("  <property><name>").append(keyValues[i]).append("</name><value>").append(keyValues[i + 1])
          .append("</value></property>\n");
    }
    Files.write(file, xml.append("</configuration>\n").toString().getBytes(StandardCharsets.UTF_8));
  }

  public interface Call<T> {
    T run() throws Exception;
  }

  public interface ClientCall<T> {
    T call(YarnClient yc) throws Exception;
  }

  /** Runs {@code body} as {@code user}: every RPC client it creates carries that user's identity. */
  public static <T> T as(String user, Call<T> body) throws Exception {
    return UserGroupInformation.createRemoteUser(user).doAs((PrivilegedExceptionAction<T>) () -> {
      try {
        return body.run();
      } catch (org.apache.hadoop.yarn.exceptions.YarnException e) {
        throw new IOException(e.getMessage(), e); // doAs passes IOExceptions through unwrapped
      }
    });
  }

  /** Runs {@code body} with a YarnClient of {@code user} on the cluster of {@code conf}. */
  public static <T> T client(Configuration conf, String user, ClientCall<T> body) throws Exception {
    return as(user, () -> {
      YarnClient yc = YarnClient.createYarnClient();
      yc.init(new Configuration(conf));
      yc.start();
      try {
        return body.call(yc);
      } finally {
        yc.stop();
      }
    });
  }
}
