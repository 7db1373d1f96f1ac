package io.dollymp.yarn.am;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.YARNRunner;
import org.apache.hadoop.mapreduce.MRConfig;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.protocol.ClientProtocol;
import org.apache.hadoop.mapreduce.protocol.ClientProtocolProvider;
import org.apache.hadoop.mapreduce.task.reduce.DollyMPShuffle;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;

/**
 * Job submission for {@code mapreduce.framework.name=dollymp}: Hadoop's YARN client, with the AM
 * command running {@link DollyMPAppMaster} instead of Hadoop's MRAppMaster, and the job's defaults
 * set for DollyMP (clone launcher, delay assignment, DollyMP shuffle), unless the user set them.
 * Registered in {@code META-INF/services/org.apache.hadoop.mapreduce.protocol.ClientProtocolProvider}.
 */
public class DollyMPClientProtocolProvider extends ClientProtocolProvider {
  public static final String FRAMEWORK_NAME = "dollymp";

  @Override
  public ClientProtocol create(Configuration conf) throws IOException {
    if (!FRAMEWORK_NAME.equals(conf.get(MRConfig.FRAMEWORK_NAME))) {
      return null;
    }
    // The job's own configuration object: these defaults reach job.xml, which the AM and tasks read.
    // mapred-default.xml gives some of these keys Hadoop's own value, which counts as unset here
    // (a user who wants the stock shuffle or speculator under this framework uses framework "yarn").
    setUnlessUserSet(conf, MRJobConfig.MAP_SPECULATIVE, "true", "true");
    setUnlessUserSet(conf, MRJobConfig.REDUCE_SPECULATIVE, "true", "true");
    setUnlessUserSet(conf, MRJobConfig.MR_AM_JOB_SPECULATOR, CloningSpeculator.class.getName(),
        "org.apache.hadoop.mapreduce.v2.app.speculate.DefaultSpeculator");
    setUnlessUserSet(conf, AmConfig.DELAY_ASSIGNMENT, "true", null);
    setUnlessUserSet(conf, MRConfig.SHUFFLE_CONSUMER_PLUGIN, DollyMPShuffle.class.getName(),
        "org.apache.hadoop.mapreduce.task.reduce.Shuffle");
    return new Runner(conf);
  }

  private static void setUnlessUserSet(Configuration conf, String key, String value, String hadoopDefault) {
    String cur = conf.getTrimmed(key);
    if (cur == null || cur.isEmpty() || cur.equals(hadoopDefault)) {
      conf.set(key, value, "DollyMP job-submission provider");
    }
  }

  @Override
  public ClientProtocol create(InetSocketAddress addr, Configuration conf) throws IOException {
    return create(conf);
  }

  @Override
  public void close(ClientProtocol protocol) throws IOException {
    if (protocol instanceof YARNRunner) {
      ((YARNRunner) protocol).close();
    }
  }

  /** Hadoop's YARNRunner whose AM command names the DollyMP AM. */
  public static class Runner extends YARNRunner {
    public Runner(Configuration conf) {
      super(conf);
    }

    @Override
    public ApplicationSubmissionContext createApplicationSubmissionContext(Configuration jobConf,
        String jobSubmitDir, Credentials ts) throws IOException {
      ApplicationSubmissionContext ctx = super.createApplicationSubmissionContext(jobConf, jobSubmitDir, ts);
      ContainerLaunchContext am = ctx.getAMContainerSpec();
      List<String> commands = new ArrayList<>();
      boolean replaced = false;
      for (String c : am.getCommands()) {
        String r = c.replace(" " + MRJobConfig.APPLICATION_MASTER_CLASS + " ",
            " " + DollyMPAppMaster.class.getName() + " ");
        replaced |= !r.equals(c);
        commands.add(r);
      }
      if (!replaced) {
        throw new IOException("DollyMP: the AM command does not name " + MRJobConfig.APPLICATION_MASTER_CLASS
            + ": " + am.getCommands());
      }
      am.setCommands(commands);
      return ctx;
    }
  }
}
