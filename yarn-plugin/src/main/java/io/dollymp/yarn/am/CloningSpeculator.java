package io.dollymp.yarn.am;

import io.dollymp.proto.v1.AttemptReport;
import io.dollymp.proto.v1.AttemptReports;
import io.dollymp.proto.v1.ClonePlan;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.api.records.JobState;
import org.apache.hadoop.mapreduce.v2.api.records.TaskState;
import org.apache.hadoop.mapreduce.v2.app.AppContext;
import org.apache.hadoop.mapreduce.v2.app.job.Job;
import org.apache.hadoop.mapreduce.v2.app.job.Task;
import org.apache.hadoop.mapreduce.v2.app.job.TaskAttempt;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskEvent;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskEventType;
import org.apache.hadoop.mapreduce.v2.app.speculate.Speculator;
import org.apache.hadoop.mapreduce.v2.app.speculate.SpeculatorEvent;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptStatusUpdateEvent;
import org.apache.hadoop.service.AbstractService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The DollyMP clone launcher, plugged into the MapReduce AM as its speculator
 * ({@code yarn.app.mapreduce.am.job.speculator.class}; the AM creates a speculator only when
 * {@code mapreduce.map.speculative} or {@code mapreduce.reduce.speculative} is true).
 *
 * <p>Its own thread reports the job's profile and attempts to the decision service and launches the
 * clones the service grants by sending Hadoop's own {@code T_ADD_SPEC_ATTEMPT} task event, only to
 * RUNNING tasks. The AM's dispatcher thread never waits on the service: {@link #handle} does nothing.
 * The first attempt to succeed wins; TaskImpl kills the others and releases their containers.
 */
public class CloningSpeculator extends AbstractService implements Speculator {
  private static final Logger LOG = LoggerFactory.getLogger(CloningSpeculator.class);
  private static volatile CloningSpeculator current;

  private final Configuration conf;
  private final AppContext context;
  private final CloneBook book;
  private final AmServiceClient client;
  private final long pollMs;
  private final long planPollMs;
  private long lastPlanMs;
  private final AttemptRecord record;
  private volatile boolean stopping;
  private Thread worker;
  private boolean profileSent;
  private int resends;
  private volatile double omegaS;
  private final boolean delay;
  private String publishedCopies = "";
  private final MapReadBook reads = new MapReadBook();
  private long readsPolledMs;

  public CloningSpeculator(Configuration conf, AppContext context) {
    super(CloningSpeculator.class.getName());
    this.conf = conf;
    this.context = context;
    this.book = new CloneBook(AmConfig.maxClones(conf),
        AmConfig.positive(conf, AmConfig.PROGRESS_REPORT_MS, AmConfig.DEFAULT_PROGRESS_REPORT_MS),
        AmConfig.nonNegative(conf, AmConfig.CLONE_AFTER_START_MS, AmConfig.DEFAULT_CLONE_AFTER_START_MS));
    try {
      this.client = new AmServiceClient(AmConfig.serviceAddress(conf),
          AmConfig.positive(conf, AmConfig.RPC_TIMEOUT_MS, AmConfig.DEFAULT_RPC_TIMEOUT_MS),
          AmConfig.positive(conf, AmConfig.RETRY_MS, AmConfig.DEFAULT_RETRY_MS), AmConfig.credentials(conf),
          AmTokens::digestHex);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("DollyMP AM helper: cannot read the TLS files: " + e.getMessage(), e);
    }
    this.pollMs = AmConfig.positive(conf, AmConfig.POLL_MS, AmConfig.DEFAULT_POLL_MS);
    this.planPollMs = AmConfig.positive(conf, AmConfig.PLAN_POLL_MS, AmConfig.DEFAULT_PLAN_POLL_MS);
    this.record = new AttemptRecord(conf);
    this.delay = conf.getBoolean(AmConfig.DELAY_ASSIGNMENT, false);
    current = this;
  }

  /** The helper of this AM process (one job per AM), or null. */
  public static CloningSpeculator current() {
    return current;
  }

  /** ω the service answered, in seconds (0 when none or unreachable). */
  public double omegaS() {
    return omegaS;
  }

  /** How often the service did not know the job and the helper sent its profile and attempts again. */
  public synchronized int resends() {
    return resends;
  }

  /** Whether the attempt (Hadoop's string form) was launched as a clone. */
  public synchronized boolean isClone(String taskId, String attemptId) {
    return book.isClone(taskId, attemptId);
  }

  /** Clones launched for the task. */
  public synchronized int clonesSent(String taskId) {
    return book.clonesSent(taskId);
  }

  @Override
  protected void serviceStart() throws Exception {
    worker = new Thread(this::loop, "dollymp-am-helper");
    worker.setDaemon(true);
    worker.start();
    super.serviceStart();
  }

  @Override
  protected void serviceStop() throws Exception {
    stopping = true;
    if (worker != null) {
      // Let a tick in flight finish (it may be writing the attempt record: an interrupt would break
      // Hadoop's file operations); interrupt only a worker that does not stop by itself.
      worker.join(Math.max(2000, 5 * pollMs));
      if (worker.isAlive()) {
        worker.interrupt();
        worker.join(5000);
      }
    }
    Job job = job();
    if (job != null) {
      tick(job); // last reports and the final record
    }
    client.close();
    super.serviceStop();
  }

  @Override
  public void handle(SpeculatorEvent event) {
    // Nothing on the dispatcher thread; the helper's own thread polls the AppContext.
  }

  @Override
  public void handleAttempt(TaskAttemptStatusUpdateEvent.TaskAttemptStatus status) {
    // unused, as in Hadoop's DefaultSpeculator
  }

  private Job job() {
    Map<?, Job> jobs = context.getAllJobs();
    return jobs.isEmpty() ? null : jobs.values().iterator().next();
  }

  private void loop() {
    while (!stopping) {
      try {
        Job job = job();
        if (job != null) {
          tick(job);
        }
        Thread.sleep(pollMs);
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        LOG.warn("DollyMP AM helper: tick failed; the job continues without it this round", e);
      }
    }
  }

  private synchronized void tick(Job job) {
    String appId = context.getApplicationID().toString();
    if (!profileSent) {
      Optional<ClonePlan> plan = client.reportJobProfile(JobProfiles.of(appId, job, conf));
      if (plan.isPresent()) {
        profileSent = true;
        adopt(plan.get());
      }
    }
    Map<String, Task> byId = new HashMap<>();
    List<TaskView> views = new ArrayList<>();
    for (Task t : job.getTasks().values()) {
      byId.put(t.getID().toString(), t);
      views.add(view(t));
    }
    long now = System.currentTimeMillis();
    if (delay && (stopping || now - readsPolledMs >= planPollMs)) {
      reads.poll(conf); // the reduce copies' map reads (MapReads), at most once per plan poll
      readsPolledMs = now;
    }
    List<AttemptReport> reports = reads.attach(book.changes(views, now, reads.pending()));
    if (!reports.isEmpty()) {
      Optional<ClonePlan> plan = profileSent
          ? client.reportAttempts(AttemptReports.newBuilder().setApplicationId(appId).addAllAttempts(reports).build())
          : Optional.empty();
      if (plan.isPresent()) {
        adopt(plan.get());
      } else {
        book.unreport(reports);
        reads.unreport(reports);
      }
    } else if (profileSent && !stopping && System.currentTimeMillis() - lastPlanMs >= planPollMs) {
      client.getClonePlan(appId).ifPresent(this::adopt); // a task may have become late meanwhile
    }
    if (client.takeUnknownApplication()) { // the service restarted: profile and every attempt again
      profileSent = false;
      book.unreportAll();
      reads.unreportAll();
      resends++;
    }
    if (!stopping) {
      launch(book.toClone(views, System.currentTimeMillis()), byId);
    }
    if (delay) {
      publishCopies(views);
    }
    JobState js = job.getState();
    if (js == JobState.SUCCEEDED || js == JobState.FAILED || js == JobState.KILLED || stopping) {
      record.write(appId, views, book, js.toString());
    }
  }

  /**
   * Sends the clones' {@code T_ADD_SPEC_ATTEMPT} events, one per task in turn: every task's first clone
   * before any task's second ({@link CloneBook#roundRobin}).
   */
  private void launch(Map<String, Integer> clones, Map<String, Task> byId) {
    Map<String, Integer> running = new java.util.LinkedHashMap<>();
    for (Map.Entry<String, Integer> e : clones.entrySet()) {
      if (byId.get(e.getKey()).getState() == TaskState.RUNNING) {
        running.put(e.getKey(), e.getValue()); // T_ADD_SPEC_ATTEMPT outside RUNNING would fail the job
      }
    }
    for (String taskId : CloneBook.roundRobin(running)) {
      context.getEventHandler().handle(new TaskEvent(byId.get(taskId).getID(), TaskEventType.T_ADD_SPEC_ATTEMPT));
    }
    running.forEach((taskId, n) -> LOG.info("DollyMP AM helper: launching {} clone(s) of {}", n, taskId));
  }

  /** Whether the plan clones reduce tasks (delay assignment then keeps map copies for ω). */
  public synchronized boolean reduceClonesPlanned() {
    return book.clonesFor("", "reduce") > 0;
  }

  private void publishCopies(List<TaskView> views) {
    org.apache.hadoop.fs.Path file = MapCopies.path(conf);
    if (file == null) {
      return;
    }
    Map<Integer, List<MapCopies.Copy>> maps = new java.util.TreeMap<>();
    Map<Integer, Integer> reduces = new java.util.TreeMap<>();
    for (TaskView t : views) {
      int index = Integer.parseInt(t.taskId().substring(t.taskId().lastIndexOf('_') + 1));
      if (t.phase().equals("map")) {
        for (AttemptView a : t.attempts()) {
          if (!a.shuffleUrl().isEmpty()) {
            int no = Integer.parseInt(a.attemptId().substring(a.attemptId().lastIndexOf('_') + 1));
            maps.computeIfAbsent(index, k -> new ArrayList<>())
                .add(new MapCopies.Copy(index, no, a.attemptId(), a.state(), a.shuffleUrl()));
          }
        }
      } else {
        reduces.put(index, 1 + book.clonesSent(t.taskId()));
      }
    }
    String text = new MapCopies(omegaMs(), maps, reduces).render();
    if (text.equals(publishedCopies)) {
      return;
    }
    try {
      MapCopies.write(conf, file, text);
      publishedCopies = text;
    } catch (java.io.IOException e) {
      LOG.warn("DollyMP AM helper: could not publish map copies to {}", file, e);
    }
  }

  /** ω the AM honours, ms: the service's answer capped by {@code dollymp.am.delay-assignment.max-wait-s}. */
  public long omegaMs() {
    double cap = conf.getDouble(AmConfig.MAX_OMEGA_S, AmConfig.DEFAULT_MAX_OMEGA_S);
    return Math.round(1000 * Math.max(0, Math.min(cap, omegaS)));
  }

  private void adopt(ClonePlan plan) {
    lastPlanMs = System.currentTimeMillis();
    book.setPlan(PlanOverride.apply(conf, plan));
    omegaS = book.omegaS();
  }

  private TaskView view(Task t) {
    String scheme = conf.getBoolean(org.apache.hadoop.mapreduce.MRConfig.SHUFFLE_SSL_ENABLED_KEY, false)
        ? "https://" : "http://";
    List<AttemptView> as = new ArrayList<>();
    for (TaskAttempt a : t.getAttempts().values()) {
      if (DelayedKillDispatcher.isDroppedReplacement(a.getID())) {
        continue; // never scheduled: it is no copy of the task (its clone yielded, see DelayedKillDispatcher)
      }
      as.add(new AttemptView(a.getID().toString(),
          a.getAssignedContainerID() == null ? "" : a.getAssignedContainerID().toString(),
          a.getNodeId() == null ? "" : a.getNodeId().toString(), a.getState().toString(), a.getLaunchTime(),
          a.getFinishTime(), a.getNodeHttpAddress() == null ? ""
              : scheme + a.getNodeHttpAddress().split(":")[0] + ":" + a.getShufflePort(), a.getProgress()));
    }
    String phase = t.getType() == org.apache.hadoop.mapreduce.v2.api.records.TaskType.MAP ? "map" : "reduce";
    TaskState state = t.getState();
    String won = state == TaskState.SUCCEEDED ? winner(t, as) : "";
    return new TaskView(t.getID().toString(), phase, state.toString(), as, won);
  }

  /**
   * The attempt that won a succeeded task: its one attempt in state SUCCEEDED (only one attempt of a task
   * commits). The task's report says so too, but building it copies the attempt's counters, and this runs
   * for every finished task on every poll; it is asked only when the attempts do not tell.
   */
  private static String winner(Task t, List<AttemptView> attempts) {
    String found = "";
    for (AttemptView a : attempts) {
      if (a.state().equals("SUCCEEDED")) {
        if (!found.isEmpty()) {
          found = "";
          break;
        }
        found = a.attemptId();
      }
    }
    if (!found.isEmpty()) {
      return found;
    }
    org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId id = t.getReport().getSuccessfulAttempt();
    return id == null ? "" : id.toString();
  }
}
