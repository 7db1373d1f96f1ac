package io.dollymp.yarn.am;

import java.util.EnumSet;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptState;
import org.apache.hadoop.mapreduce.v2.app.AppContext;
import org.apache.hadoop.mapreduce.v2.app.DollyMPAppMasterHooks;
import org.apache.hadoop.mapreduce.v2.app.MRAppMaster;
import org.apache.hadoop.mapreduce.v2.app.job.Job;
import org.apache.hadoop.mapreduce.v2.app.job.Task;
import org.apache.hadoop.mapreduce.v2.app.job.TaskAttempt;
import org.apache.hadoop.mapreduce.v2.util.MRWebAppUtil;
import org.apache.hadoop.util.ExitUtil;
import org.apache.hadoop.util.ShutdownHookManager;
import org.apache.hadoop.yarn.YarnUncaughtExceptionHandler;
import org.apache.hadoop.yarn.api.ApplicationConstants;
import org.apache.hadoop.yarn.api.ApplicationConstants.Environment;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.event.Dispatcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hadoop's MapReduce AM with one change: its dispatcher ({@link DelayedKillDispatcher}) holds the
 * kills of losing map copies for ω when the job's reduce tasks are cloned, so reduce clones can read
 * distinct map copies (delay assignment), and lets a clone the RM preempted go unreplaced. Launched by {@link DollyMPClientProtocolProvider} when a
 * job sets {@code mapreduce.framework.name=dollymp}.
 */
public class DollyMPAppMaster extends MRAppMaster {
  private static final Logger LOG = LoggerFactory.getLogger(DollyMPAppMaster.class);

  public DollyMPAppMaster(ApplicationAttemptId attemptId, ContainerId containerId, String nmHost, int nmPort,
      int nmHttpPort, long appSubmitTime) {
    super(attemptId, containerId, nmHost, nmPort, nmHttpPort, appSubmitTime);
  }

  @Override
  protected Dispatcher createDispatcher() {
    return new DelayedKillDispatcher(this::holdMs, this::finished, this::yielded);
  }

  /**
   * A preempted attempt yielded (its replacement is not scheduled): another copy of its task is
   * starting, running or committing, which carries the task on. The copy may be a clone (it yielded its
   * container, or its task's lead beat it) or, with the service's appmaster.release_beaten_originals, an
   * original a clone of its task clearly beat. Otherwise Hadoop's replacement runs as usual.
   */
  boolean yielded(TaskAttemptId id) {
    CloningSpeculator helper = CloningSpeculator.current();
    AppContext ctx = getContext();
    Job job = ctx == null ? null : ctx.getJob(id.getTaskId().getJobId());
    Task task = job == null ? null : job.getTask(id.getTaskId());
    if (helper == null || task == null) {
      return false;
    }
    return task.getAttempts().values().stream().anyMatch(a -> !a.getID().equals(id)
        && EnumSet.of(TaskAttemptState.STARTING, TaskAttemptState.RUNNING, TaskAttemptState.COMMIT_PENDING)
            .contains(a.getState()));
  }

  /** ω in ms while delay assignment applies (on, ω > 0, reduce tasks cloned), else 0. */
  long holdMs(TaskAttemptId id) {
    CloningSpeculator helper = CloningSpeculator.current();
    if (helper == null || !getConfig().getBoolean(AmConfig.DELAY_ASSIGNMENT, false)
        || !helper.reduceClonesPlanned()) {
      return 0;
    }
    return helper.omegaMs();
  }

  boolean finished(TaskAttemptId id) {
    AppContext ctx = getContext();
    Job job = ctx == null ? null : ctx.getJob(id.getTaskId().getJobId());
    Task task = job == null ? null : job.getTask(id.getTaskId());
    TaskAttempt attempt = task == null ? null : task.getAttempt(id);
    return attempt == null || attempt.isFinished();
  }

  private static String env(String name) {
    String v = System.getenv(name);
    if (v == null || v.isEmpty()) {
      throw new IllegalArgumentException("environment variable " + name + " is not set");
    }
    return v;
  }

  /** The AM container's entry point (same environment contract as Hadoop's MRAppMaster). */
  public static void main(String[] args) {
    try {
      Thread.setDefaultUncaughtExceptionHandler(new YarnUncaughtExceptionHandler());
      ContainerId containerId = ContainerId.fromString(env(Environment.CONTAINER_ID.name()));
      DollyMPAppMaster am = new DollyMPAppMaster(containerId.getApplicationAttemptId(), containerId,
          env(Environment.NM_HOST.name()), Integer.parseInt(env(Environment.NM_PORT.name())),
          Integer.parseInt(env(Environment.NM_HTTP_PORT.name())),
          Long.parseLong(env(ApplicationConstants.APP_SUBMIT_TIME_ENV)));
      ShutdownHookManager.get().addShutdownHook(DollyMPAppMasterHooks.shutdownHook(am),
          MRAppMaster.SHUTDOWN_HOOK_PRIORITY);
      JobConf conf = new JobConf(new YarnConfiguration());
      conf.addResource(new Path(MRJobConfig.JOB_CONF_FILE));
      MRWebAppUtil.initialize(conf);
      String user = env(Environment.USER.name());
      conf.set(MRJobConfig.USER_NAME, user);
      LOG.info("DollyMP AM starting for {}", containerId);
      initAndStartAppMaster(am, conf, user);
    } catch (Throwable t) {
      LOG.error("Error starting the DollyMP AM", t);
      ExitUtil.terminate(1, t);
    }
  }
}
