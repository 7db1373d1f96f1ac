package org.apache.hadoop.yarn.sls.appmaster;

import io.dollymp.proto.v1.AttemptReport;
import io.dollymp.proto.v1.AttemptReports;
import io.dollymp.proto.v1.ClonePlan;
import io.dollymp.proto.v1.JobProfile;
import io.dollymp.proto.v1.PhaseProfile;
import io.dollymp.yarn.am.AmConfig;
import io.dollymp.yarn.am.AmServiceClient;
import io.dollymp.yarn.am.AmTokens;
import io.dollymp.yarn.am.AttemptView;
import io.dollymp.yarn.am.CloneBook;
import io.dollymp.yarn.am.TaskView;
import io.dollymp.yarn.scheduler.DollyMPScheduler;
import io.dollymp.yarn.sls.SlsJobRecords;
import io.dollymp.yarn.sls.StragglerDraws;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.protocolrecords.GetNewApplicationRequest;
import org.apache.hadoop.yarn.api.protocolrecords.SubmitApplicationRequest;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.ExecutionType;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.ReservationId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.sls.AMDefinition;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.nodemanager.NMSimulator;
import org.apache.hadoop.yarn.sls.scheduler.ContainerSimulator;
import org.apache.hadoop.yarn.util.Records;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An SLS ApplicationMaster simulator of a MapReduce job with stragglers and extra copies, registered by
 * SLS's AM-type key ({@code yarn.sls.am.type.dollymp}, or {@code yarn.sls.am.type.mapreduce} for Rumen
 * traces, whose jobs SLS always types "mapreduce").
 *
 * <p>Each copy of a task runs for the trace's base time x a slowdown drawn from the straggler model of
 * {@code dollymp simulate} ({@link StragglerDraws}: same model, same seed, same copy key (job, phase, task,
 * n-th copy)). Maps are asked for at once, reduces when every map has finished (SLS's own MRAMSimulator
 * has no slow start either). The first copy of a task to finish wins; the AM releases the others' containers
 * (the RM kills them). Extra copies, by {@link #MODE}:
 * <ul>
 *   <li>{@code speculate}: Hadoop's stock MapReduce speculator as configured by its own keys
 *       ({@code mapreduce.job.speculative.*}): at most one new copy per phase each round, of the running task
 *       whose estimated end (elapsed / progress, progress linear in the copy's run time) is furthest beyond
 *       the end of a fresh copy started now (the phase's mean finished run time), only if its estimated run
 *       time exceeds mean + slowtaskthreshold x standard deviation; rounds every retry-after-no-speculate ms,
 *       retry-after-speculate ms after one that speculated; live speculative copies capped at
 *       max(minimum-allowed-tasks, cap-total x tasks, cap-running x running tasks);</li>
 *   <li>{@code dollymp}: the AM helper's protocol, through the helper's own classes ({@link AmServiceClient},
 *       {@link CloneBook}): the job profile once the AM runs, attempt reports (waiting clones named as
 *       ATTEMPT_WAITING, progress, the winner), the clone plan; the clones the book grants are asked for at
 *       their phase's priority and launched in the containers the RM grants;</li>
 *   <li>{@code none}: no extra copies; {@code auto} (default): {@code dollymp} under the DollyMP shim, else
 *       {@code speculate}.</li>
 * </ul>
 * Each job's record goes to {@link SlsJobRecords} as it finishes.
 */
public class DollyMPAMSimulator extends AMSimulator {
  public static final String PREFIX = "dollymp.sls.";
  public static final String MODE = PREFIX + "mode";
  public static final String STRAGGLER = PREFIX + "straggler";
  public static final String DEFAULT_STRAGGLER = "pareto:alpha=1.5,cap=20";
  public static final String SEED = PREFIX + "seed";
  /** How often the helper asks for the clone plan when it has nothing to report, ms. */
  public static final String PLAN_POLL_MS = PREFIX + "plan-poll-ms";
  public static final long DEFAULT_PLAN_POLL_MS = 2000;

  private static final Logger LOG = LoggerFactory.getLogger(DollyMPAMSimulator.class);
  private static volatile ResourceManager lastRm;
  private static final int[] PRIORITY = {20, 10};
  private static final String[] PHASE = {"map", "reduce"};
  private static final char[] LETTER = {'m', 'r'};

  private enum Mode { NONE, SPECULATE, DOLLYMP }

  /** One copy (attempt) of a task. */
  private static final class Copy {
    final Task task;
    final int nth;
    final boolean extra;
    final String attemptId;
    String state = "UNASSIGNED";
    Container container;
    long launchMs;
    long durationMs;
    long finishMs;

    Copy(Task task, int nth, boolean extra) {
      this.task = task;
      this.nth = nth;
      this.extra = extra;
      this.attemptId = "attempt" + task.taskId.substring("task".length()) + "_" + nth;
    }

    boolean live() {
      return state.equals("UNASSIGNED") || state.equals("RUNNING");
    }
  }

  /** One task of a phase. */
  private static final class Task {
    final int phase;
    final int index;
    final String taskId;
    final List<Copy> copies = new ArrayList<>();
    int nextNth;
    String winner = "";

    Task(int phase, int index, String taskId) {
      this.phase = phase;
      this.index = index;
      this.taskId = taskId;
    }

    boolean done() {
      return !winner.isEmpty();
    }
  }

  private Mode mode = Mode.NONE;
  private Map<ApplicationId, AMSimulator> amSims;
  private long baselineMs;
  private String submitter;
  private Resource amResource;
  private String labelExpression;
  private StragglerDraws draws;
  private int jobIndex;
  private final List<List<Task>> phases = new ArrayList<>();
  private final Resource[] demand = new Resource[2];
  private long[][] bases = new long[2][];
  private final List<Deque<Copy>> waiting = Arrays.asList(new ArrayDeque<>(), new ArrayDeque<>());
  private final int[] asked = new int[2];
  private final boolean[] started = new boolean[2];
  private final Map<ContainerId, Copy> byContainer = new HashMap<>();
  private final List<ContainerId> toRelease = new ArrayList<>();
  private boolean finished;
  private long submitMs;
  private int copiesLaunched;
  private int extraLaunched;
  private int extraWon;
  private int killed;

  // speculate
  private long nextSpeculationMs;
  private long retryAfterSpeculateMs;
  private long retryAfterNoSpeculateMs;
  private double capRunning;
  private double capTotal;
  private int minAllowed;
  private double slowTaskThreshold;

  // dollymp
  private Configuration conf;
  private CloneBook book;
  private AmServiceClient client;
  private boolean profileSent;
  private long lastPlanMs;
  private long planPollMs;

  @Override
  public void init(AMDefinition amDef, ResourceManager resourceManager, SLSRunner slsRunner, boolean tracked,
      long baselineTimeMS, long heartbeatInterval, Map<ApplicationId, AMSimulator> appIdToAMSim) {
    super.init(amDef, resourceManager, slsRunner, tracked, baselineTimeMS, heartbeatInterval, appIdToAMSim);
    amtype = "dollymp";
    lastRm = resourceManager;
    amSims = appIdToAMSim;
    baselineMs = baselineTimeMS;
    submitter = amDef.getUser();
    amResource = amDef.getAmResource();
    labelExpression = amDef.getLabelExpression();
    conf = slsRunner.getConf() == null ? new Configuration() : slsRunner.getConf();
    jobIndex = jobIndex(amDef.getOldAppId());
    long arrival = arrivalMs(amDef.getOldAppId());
    if (arrival > 0) {
      // SLS 3.4's Rumen reader rebases every job's times on its own start (each job starts at 0): the
      // arrival the trace converter wrote into the job id (job_<arrival ms>_<index>) schedules it instead.
      init(arrival, arrival + 1000000L * heartbeatInterval, heartbeatInterval);
      traceStartTimeMS = arrival;
    }
    draws = StragglerDraws.parse(conf.get(STRAGGLER, DEFAULT_STRAGGLER), conf.getLong(SEED, 1L));
    List<List<ContainerSimulator>> byPhase = Arrays.asList(new ArrayList<>(), new ArrayList<>());
    for (ContainerSimulator cs : amDef.getTaskContainers()) {
      byPhase.get("reduce".equals(cs.getType()) ? 1 : 0).add(cs);
    }
    for (int k = 0; k < 2; k++) {
      List<ContainerSimulator> cs = byPhase.get(k);
      List<Task> tasks = new ArrayList<>();
      bases[k] = new long[cs.size()];
      for (int t = 0; t < cs.size(); t++) {
        bases[k][t] = Math.max(1L, cs.get(t).getLifeTime());
        tasks.add(new Task(k, t, ""));
      }
      demand[k] = cs.isEmpty() ? null : cs.get(0).getResource();
      phases.add(tasks);
    }
    totalContainers = byPhase.get(0).size() + byPhase.get(1).size();
    String m = conf.get(MODE, "auto").trim().toLowerCase(Locale.ROOT);
    if (m.equals("auto")) {
      mode = resourceManager.getResourceScheduler() instanceof DollyMPScheduler ? Mode.DOLLYMP : Mode.SPECULATE;
    } else {
      mode = Mode.valueOf(m.toUpperCase(Locale.ROOT));
    }
    retryAfterSpeculateMs = conf.getLong(MRJobConfig.SPECULATIVE_RETRY_AFTER_SPECULATE,
        MRJobConfig.DEFAULT_SPECULATIVE_RETRY_AFTER_SPECULATE);
    retryAfterNoSpeculateMs = conf.getLong(MRJobConfig.SPECULATIVE_RETRY_AFTER_NO_SPECULATE,
        MRJobConfig.DEFAULT_SPECULATIVE_RETRY_AFTER_NO_SPECULATE);
    capRunning = conf.getDouble(MRJobConfig.SPECULATIVECAP_RUNNING_TASKS,
        MRJobConfig.DEFAULT_SPECULATIVECAP_RUNNING_TASKS);
    capTotal = conf.getDouble(MRJobConfig.SPECULATIVECAP_TOTAL_TASKS, MRJobConfig.DEFAULT_SPECULATIVECAP_TOTAL_TASKS);
    minAllowed = conf.getInt(MRJobConfig.SPECULATIVE_MINIMUM_ALLOWED_TASKS,
        MRJobConfig.DEFAULT_SPECULATIVE_MINIMUM_ALLOWED_TASKS);
    slowTaskThreshold = conf.getDouble(MRJobConfig.SPECULATIVE_SLOWTASK_THRESHOLD, 1.0);
    planPollMs = conf.getLong(PLAN_POLL_MS, DEFAULT_PLAN_POLL_MS);
  }

  /** The ResourceManager the simulated AMs of this process talk to (null before the first AM). */
  public static ResourceManager resourceManager() {
    return lastRm;
  }

  /** The arrival (ms after the simulation's start) in a job id job_<arrival>_<index>, else 0. */
  static long arrivalMs(String oldAppId) {
    String[] parts = oldAppId == null ? new String[0] : oldAppId.split("_");
    if (parts.length != 3 || !parts[0].equals("job")) {
      return 0;
    }
    try {
      return Math.max(0, Long.parseLong(parts[1]));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** The job's position in the workload: the number after the last '_' of the trace's job id. */
  static int jobIndex(String oldAppId) {
    if (oldAppId == null) {
      return 0;
    }
    String tail = oldAppId.substring(oldAppId.lastIndexOf('_') + 1);
    try {
      return Integer.parseInt(tail);
    } catch (NumberFormatException e) {
      return Math.abs(oldAppId.hashCode() % 1_000_000);
    }
  }

  @Override
  public void firstStep() throws Exception {
    submitMs = System.currentTimeMillis();
    simulateStartTimeMS = submitMs - baselineMs;
    submit();
    String app = appId.toString().substring("application".length()); // _<cluster ts>_<seq>
    for (int k = 0; k < 2; k++) {
      List<Task> named = new ArrayList<>();
      for (Task t : phases.get(k)) {
        named.add(new Task(k, t.index, String.format(Locale.ROOT, "task%s_%c_%06d", app, LETTER[k], t.index)));
      }
      phases.set(k, named);
    }
    if (mode == Mode.DOLLYMP) {
      book = new CloneBook(AmConfig.maxClones(conf),
          AmConfig.positive(conf, AmConfig.PROGRESS_REPORT_MS, AmConfig.DEFAULT_PROGRESS_REPORT_MS),
          AmConfig.nonNegative(conf, AmConfig.CLONE_AFTER_START_MS, AmConfig.DEFAULT_CLONE_AFTER_START_MS));
      client = new AmServiceClient(AmConfig.serviceAddress(conf),
          AmConfig.positive(conf, AmConfig.RPC_TIMEOUT_MS, AmConfig.DEFAULT_RPC_TIMEOUT_MS),
          AmConfig.positive(conf, AmConfig.RETRY_MS, AmConfig.DEFAULT_RETRY_MS), AmConfig.credentials(conf),
          this::tokenDigest);
    }
  }

  /**
   * Submits the application as SLS's AMSimulator does, but enters this simulator in SLS's map of AMs before
   * the submission, not after: under load the RM placed an AM container and SLS's MockAMLauncher looked the
   * AM up before AMSimulator had entered it ("Didn't find any AMSimulator", which stops the RM's dispatcher
   * and so the whole run; once in 6 runs of 500 jobs on 1,000 NMs).
   */
  private void submit() throws Exception {
    appId = rm.getClientRMService().getNewApplication(Records.newRecord(GetNewApplicationRequest.class))
        .getApplicationId();
    amSims.put(appId, this);
    ApplicationSubmissionContext app = Records.newRecord(ApplicationSubmissionContext.class);
    app.setApplicationId(appId);
    app.setMaxAppAttempts(1);
    app.setQueue(queue);
    app.setPriority(Priority.newInstance(0));
    ContainerLaunchContext launch = Records.newRecord(ContainerLaunchContext.class);
    launch.setApplicationACLs(new HashMap<>());
    launch.setCommands(new ArrayList<>());
    launch.setEnvironment(new HashMap<>());
    launch.setLocalResources(new HashMap<>());
    launch.setServiceData(new HashMap<>());
    app.setAMContainerSpec(launch);
    app.setResource(amResource);
    if (labelExpression != null) {
      app.setNodeLabelExpression(labelExpression);
    }
    final SubmitApplicationRequest request = Records.newRecord(SubmitApplicationRequest.class);
    request.setApplicationSubmissionContext(app);
    UserGroupInformation.createRemoteUser(submitter).doAs(
        (PrivilegedExceptionAction<Object>) () -> rm.getClientRMService().submitApplication(request));
  }

  private String tokenDigest() {
    try {
      Token<AMRMTokenIdentifier> token = amrmToken();
      return token == null ? "" : AmTokens.sha256Hex(token.getPassword());
    } catch (RuntimeException e) {
      return "";
    }
  }

  private Token<AMRMTokenIdentifier> amrmToken() {
    return rm.getRMContext().getRMApps().get(appAttemptId.getApplicationId()).getRMAppAttempt(appAttemptId)
        .getAMRMToken();
  }

  @Override
  protected void processResponseQueue() throws Exception {
    AllocateResponse response;
    while ((response = responseQueue.poll()) != null) {
      long now = System.currentTimeMillis();
      for (ContainerStatus status : response.getCompletedContainersStatuses()) {
        completed(status, now);
      }
      for (Container container : response.getAllocatedContainers()) {
        allocated(container, now);
      }
    }
    if (!finished && allDone()) {
      finish();
    }
  }

  private void allocated(Container container, long now) {
    int k = container.getPriority().getPriority() == PRIORITY[1] ? 1 : 0;
    if (container.getPriority().getPriority() == PRIORITY[k]) {
      asked[k] = Math.max(0, asked[k] - 1);
    }
    Copy copy = waiting.get(k).poll();
    while (copy != null && !copy.live()) {
      copy = waiting.get(k).poll();
    }
    if (copy == null || finished) {
      toRelease.add(container.getId()); // more than the AM waits for (asks race with allocations)
      return;
    }
    copy.container = container;
    copy.state = "RUNNING";
    copy.launchMs = now;
    copy.durationMs = draws.copyTimeMs(jobIndex, k, copy.task.index, copy.nth, copy.extra, bases[k]);
    byContainer.put(container.getId(), copy);
    NMSimulator nm = se.getNmMap().get(container.getNodeId());
    nm.addNewContainer(container, copy.durationMs, appId);
    getRanNodes().add(container.getNodeId());
    copiesLaunched++;
  }

  private void completed(ContainerStatus status, long now) {
    Copy copy = byContainer.remove(status.getContainerId());
    if (copy == null || !copy.state.equals("RUNNING")) {
      return; // the AM's own container, or a copy the AM already released
    }
    copy.finishMs = now;
    Task task = copy.task;
    if (status.getExitStatus() != ContainerExitStatus.SUCCESS) {
      copy.state = "KILLED"; // preempted (a clone yielding its container) or lost
      if (!task.done() && !copy.extra && task.copies.stream().noneMatch(Copy::live)) {
        Copy again = new Copy(task, task.nextNth++, false); // the original again, first in line
        task.copies.add(again);
        waiting.get(task.phase).addFirst(again);
      }
      return;
    }
    copy.state = "SUCCEEDED";
    if (task.done()) {
      return; // finished in the same beat as the winner
    }
    task.winner = copy.attemptId;
    finishedContainers++;
    if (copy.extra) {
      extraWon++;
    }
    for (Copy other : task.copies) {
      if (other != copy && other.live()) {
        if (other.state.equals("RUNNING")) {
          toRelease.add(other.container.getId());
          byContainer.remove(other.container.getId());
          killed++;
        }
        other.state = "KILLED";
        other.finishMs = now;
      }
    }
  }

  private boolean allDone() {
    for (List<Task> tasks : phases) {
      for (Task t : tasks) {
        if (!t.done()) {
          return false;
        }
      }
    }
    return true;
  }

  private void finish() throws Exception {
    finished = true;
    long end = System.currentTimeMillis();
    if (client != null) {
      tickHelper(end); // the last reports
    }
    SlsJobRecords.add(new SlsJobRecords.Job(jobIndex, appId.toString(), submitMs, end, totalContainers,
        copiesLaunched, extraLaunched, extraWon, killed, client == null ? 0 : client.failures()));
    if (!toRelease.isEmpty()) {
      allocate(new ArrayList<>());
    }
    if (client != null) {
      client.close();
    }
    lastStep();
  }

  @Override
  protected void sendContainerRequest() throws Exception {
    if (finished) {
      return;
    }
    long now = System.currentTimeMillis();
    for (int k = 0; k < 2; k++) {
      if (!started[k] && (k == 0 || phaseDone(0))) {
        started[k] = true;
        for (Task t : phases.get(k)) {
          Copy c = new Copy(t, t.nextNth++, false);
          t.copies.add(c);
          waiting.get(k).add(c);
        }
      }
    }
    if (mode == Mode.SPECULATE) {
      speculate(now);
    } else if (mode == Mode.DOLLYMP) {
      tickHelper(now);
      if (launchClones(now)) {
        tickHelper(now); // name the new clones' asks (ATTEMPT_WAITING) in the same beat
      }
    }
    List<ResourceRequest> ask = new ArrayList<>();
    for (int k = 0; k < 2; k++) {
      if (demand[k] == null) {
        continue;
      }
      int want = (int) waiting.get(k).stream().filter(Copy::live).count();
      if (want != asked[k]) {
        ask.add(createResourceRequest(demand[k], ExecutionType.GUARANTEED, ResourceRequest.ANY, PRIORITY[k], 0,
            want));
        asked[k] = want;
      }
    }
    allocate(ask);
  }

  private boolean phaseDone(int k) {
    return phases.get(k).stream().allMatch(Task::done);
  }

  private void allocate(List<ResourceRequest> ask) throws Exception {
    List<ContainerId> release = new ArrayList<>(toRelease);
    toRelease.clear();
    final AllocateRequest request = createAllocateRequest(ask, release);
    request.setProgress(totalContainers == 0 ? 1.0f : (float) finishedContainers / totalContainers);
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser(appAttemptId.toString());
    ugi.addTokenIdentifier(amrmToken().decodeIdentifier());
    AllocateResponse response = ugi.doAs(
        (PrivilegedExceptionAction<AllocateResponse>) () -> rm.getApplicationMasterService().allocate(request));
    if (response != null) {
      responseQueue.put(response);
    }
  }

  // ---- Hadoop's stock speculator, simulated ---------------------------------------------------------

  private void speculate(long now) {
    if (now < nextSpeculationMs) {
      return;
    }
    int total = totalContainers;
    int running = 0;
    int liveSpeculative = 0;
    for (List<Task> tasks : phases) {
      for (Task t : tasks) {
        if (!t.done() && t.copies.stream().anyMatch(c -> c.state.equals("RUNNING"))) {
          running++;
        }
        liveSpeculative += (int) t.copies.stream().filter(c -> c.extra && c.live()).count();
      }
    }
    double cap = Math.max(minAllowed, Math.max(capTotal * total, capRunning * running));
    boolean speculated = false;
    for (int k = 0; k < 2 && liveSpeculative < cap; k++) {
      Task best = bestToSpeculate(k, now);
      if (best != null) {
        addCopy(best);
        liveSpeculative++;
        speculated = true;
      }
    }
    nextSpeculationMs = now + (speculated ? retryAfterSpeculateMs : retryAfterNoSpeculateMs);
  }

  /** The task of phase k whose estimated end is furthest beyond a fresh copy's, or null. */
  private Task bestToSpeculate(int k, long now) {
    int n = 0;
    double sum = 0;
    double sumSq = 0;
    for (Task t : phases.get(k)) {
      for (Copy c : t.copies) {
        if (c.attemptId.equals(t.winner)) {
          double d = c.finishMs - c.launchMs;
          n++;
          sum += d;
          sumSq += d * d;
        }
      }
    }
    if (n == 0) {
      return null; // no finished task: no estimate of a new copy's run time
    }
    double mean = sum / n;
    double std = Math.sqrt(Math.max(0, sumSq / n - mean * mean));
    Task best = null;
    double bestValue = 0;
    for (Task t : phases.get(k)) {
      if (t.done() || t.copies.stream().filter(Copy::live).count() != 1) {
        continue; // one speculative copy at a time
      }
      Copy c = t.copies.stream().filter(Copy::live).findFirst().orElse(null);
      if (c == null || !c.state.equals("RUNNING")) {
        continue;
      }
      double elapsed = now - c.launchMs;
      double progress = Math.min(1.0, elapsed / c.durationMs);
      if (elapsed <= 0 || progress <= 0 || progress >= 1.0) {
        continue;
      }
      double estimatedRun = elapsed / progress;
      if (estimatedRun <= mean + slowTaskThreshold * std) {
        continue;
      }
      double value = (c.launchMs + estimatedRun) - (now + mean);
      if (value > bestValue) {
        bestValue = value;
        best = t;
      }
    }
    return best;
  }

  private void addCopy(Task t) {
    Copy c = new Copy(t, t.nextNth++, true);
    t.copies.add(c);
    waiting.get(t.phase).add(c);
    extraLaunched++;
  }

  // ---- the AM helper's protocol ---------------------------------------------------------------------

  private JobProfile profile() {
    JobProfile.Builder p = JobProfile.newBuilder().setApplicationId(appId.toString())
        .setJobName(oldAppId == null ? "" : oldAppId).setSubmitTimeMs(submitMs).setClonesPreemptible(true);
    for (int k = 0; k < 2; k++) {
      if (demand[k] == null) {
        continue;
      }
      PhaseProfile.Builder ph = PhaseProfile.newBuilder().setPhaseId(PHASE[k]).setTasks(phases.get(k).size())
          .setDemand(io.dollymp.proto.v1.Resource.newBuilder().setMemoryMb(demand[k].getMemorySize())
              .setVcores(demand[k].getVirtualCores()))
          .setYarnPriority(PRIORITY[k]);
      if (k == 1 && demand[0] != null) {
        ph.addParents(PHASE[0]);
      }
      p.addPhases(ph);
    }
    return p.build();
  }

  private List<TaskView> views(long now) {
    List<TaskView> out = new ArrayList<>();
    for (List<Task> tasks : phases) {
      for (Task t : tasks) {
        List<AttemptView> as = new ArrayList<>();
        boolean running = false;
        for (Copy c : t.copies) {
          running |= c.state.equals("RUNNING");
          float progress = c.state.equals("RUNNING")
              ? (float) Math.min(1.0, (now - c.launchMs) / (double) c.durationMs) : 0f;
          as.add(new AttemptView(c.attemptId, c.container == null ? "" : c.container.getId().toString(),
              c.container == null ? "" : c.container.getNodeId().toString(), c.state, c.launchMs, c.finishMs, "",
              progress));
        }
        String state = t.done() ? "SUCCEEDED" : running ? "RUNNING" : t.copies.isEmpty() ? "NEW" : "SCHEDULED";
        out.add(new TaskView(t.taskId, PHASE[t.phase], state, as, t.winner));
      }
    }
    return out;
  }

  private void tickHelper(long now) {
    String app = appId.toString();
    if (!profileSent) {
      Optional<ClonePlan> plan = client.reportJobProfile(profile());
      if (plan.isPresent()) {
        profileSent = true;
        adopt(plan.get(), now);
      }
    }
    List<TaskView> views = views(now);
    List<AttemptReport> reports = book.changes(views, now);
    if (!reports.isEmpty()) {
      Optional<ClonePlan> plan = profileSent
          ? client.reportAttempts(AttemptReports.newBuilder().setApplicationId(app).addAllAttempts(reports).build())
          : Optional.empty();
      if (plan.isPresent()) {
        adopt(plan.get(), now);
      } else {
        book.unreport(reports);
      }
    } else if (profileSent && now - lastPlanMs >= planPollMs) {
      client.getClonePlan(app).ifPresent(p -> adopt(p, now));
    }
    if (client.takeUnknownApplication()) {
      profileSent = false;
      book.unreportAll();
    }
  }

  private void adopt(ClonePlan plan, long now) {
    lastPlanMs = now;
    book.setPlan(plan);
  }

  /** Adds the clones the book grants now; true if it granted any. */
  private boolean launchClones(long now) {
    Map<String, Integer> clones = book.toClone(views(now), now);
    if (clones.isEmpty()) {
      return false;
    }
    Map<String, Task> byId = new HashMap<>();
    for (List<Task> tasks : phases) {
      for (Task t : tasks) {
        byId.put(t.taskId, t);
      }
    }
    for (String taskId : CloneBook.roundRobin(clones)) {
      addCopy(byId.get(taskId));
    }
    LOG.debug("{}: {} clone(s) asked for", appId, clones);
    return true;
  }

  @Override
  public void initReservation(ReservationId reservationId, long deadline, long now) {
    // no reservations
  }

  @Override
  protected void checkStop() {
    if (finished) {
      setEndTime(System.currentTimeMillis());
    }
  }
}
