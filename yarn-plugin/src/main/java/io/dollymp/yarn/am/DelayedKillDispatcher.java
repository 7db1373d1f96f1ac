package io.dollymp.yarn.am;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskType;
import org.apache.hadoop.mapreduce.v2.api.records.TaskId;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptDiagnosticsUpdateEvent;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptEvent;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptEventType;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptKillEvent;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskEventType;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskTAttemptEvent;
import org.apache.hadoop.yarn.event.AsyncDispatcher;
import org.apache.hadoop.yarn.event.Event;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The AM's dispatcher with delay assignment's first half (Dolly, paper 001, Section 4.4): when a map
 * task's first copy succeeds, Hadoop's TaskImpl kills the other copies ("Speculation: X succeeded
 * first!"). This dispatcher holds those kills of map copies for ω, so downstream reduce clones can
 * read distinct copies, then lets each kill through unless the copy has finished by then (a copy that
 * succeeded meanwhile is kept; TaskImpl only records a late success).
 *
 * <p>It also lets a copy yield its container (pyscheduler/service/round/yielding.py): when the RM preempts
 * a clone (or an original a clone beat) at the decision service's request (diagnostics
 * {@link #PREEMPTED_MARK}) while another copy of its task runs, Hadoop's TaskImpl would add and schedule a replacement attempt (a killed attempt of an
 * unfinished task is always replaced), which would ask for a container again. The replacement's
 * schedule event is dropped: the attempt stays NEW, asks for nothing, and is killed with the task's
 * other copies when one succeeds. Every other event passes unchanged, in order, on Hadoop's own
 * dispatcher thread.
 */
public class DelayedKillDispatcher extends AsyncDispatcher {
  static final String SPECULATION_KILL = "Speculation: "; // TaskImpl's message prefix for losers
  /** Diagnostics of a container the shim preempted for the service (PlanCommitter.preempt in the scheduler shim). */
  public static final String PREEMPTED_MARK = "Preempted by DollyMP";
  private static final Logger LOG = LoggerFactory.getLogger(DelayedKillDispatcher.class);
  private static volatile boolean created;
  /** Replacement attempts whose scheduling was dropped, in this JVM (one AM per JVM). */
  private static final Set<TaskAttemptId> DROPPED = ConcurrentHashMap.newKeySet();
  private final ToLongFunction<TaskAttemptId> holdMs;
  private final Predicate<TaskAttemptId> finished;
  private final Predicate<TaskAttemptId> yielded;
  private final Set<TaskAttemptId> preempted = ConcurrentHashMap.newKeySet();
  /** Per task, replacements still to drop: one per clone that yielded (several may yield at once). */
  private final Map<TaskId, Integer> replacementsDue = new ConcurrentHashMap<>();
  private final Set<Event> released = Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "dollymp-delayed-kill");
    t.setDaemon(true);
    return t;
  });

  /**
   * @param holdMs how long to hold the kill of this map attempt (0: do not hold)
   * @param finished whether the attempt has already finished (then a held kill is dropped)
   * @param yielded whether a preempted attempt's task still has another copy running
   */
  public DelayedKillDispatcher(ToLongFunction<TaskAttemptId> holdMs, Predicate<TaskAttemptId> finished,
      Predicate<TaskAttemptId> yielded) {
    super("DollyMP AM dispatcher");
    this.holdMs = holdMs;
    this.finished = finished;
    this.yielded = yielded;
    created = true;
  }

  /** Whether this AM's clones may yield (the project's AM, with this dispatcher, runs in this JVM). */
  public static boolean yieldsClones() {
    return created;
  }

  /** Whether Hadoop added {@code id} to replace a clone that yielded, and its scheduling was dropped. */
  public static boolean isDroppedReplacement(TaskAttemptId id) {
    return DROPPED.contains(id);
  }

  private static <T> T as(Object o, Class<T> type) {
    return type.isInstance(o) ? type.cast(o) : null;
  }

  @Override
  protected void dispatch(Event event) {
    TaskAttemptDiagnosticsUpdateEvent d = as(event, TaskAttemptDiagnosticsUpdateEvent.class);
    TaskTAttemptEvent t = as(event, TaskTAttemptEvent.class);
    TaskAttemptEvent a = as(event, TaskAttemptEvent.class);
    if (d != null && d.getDiagnosticInfo() != null
        && d.getDiagnosticInfo().contains(PREEMPTED_MARK)) {
      preempted.add(d.getTaskAttemptID());
    } else if (t != null && t.getType() == TaskEventType.T_ATTEMPT_KILLED
        && preempted.remove(t.getTaskAttemptID()) && yielded.test(t.getTaskAttemptID())) {
      replacementsDue.merge(t.getTaskAttemptID().getTaskId(), 1, Integer::sum);
    } else if (a != null && (a.getType() == TaskAttemptEventType.TA_SCHEDULE
        || a.getType() == TaskAttemptEventType.TA_RESCHEDULE) && takeDue(a.getTaskAttemptID().getTaskId())) {
      DROPPED.add(a.getTaskAttemptID());
      LOG.info("DollyMP: a copy of {} yielded its container; Hadoop's replacement {} is not scheduled",
          a.getTaskAttemptID().getTaskId(), a.getTaskAttemptID());
      return;
    }
    if (event instanceof TaskAttemptKillEvent && !released.remove(event)) {
      TaskAttemptKillEvent kill = (TaskAttemptKillEvent) event;
      TaskAttemptId id = kill.getTaskAttemptID();
      String msg = kill.getMessage();
      if (id.getTaskId().getTaskType() == TaskType.MAP && msg != null && msg.startsWith(SPECULATION_KILL)) {
        long ms = holdMs.applyAsLong(id);
        if (ms > 0) {
          LOG.info("DollyMP delay assignment: holding the kill of map copy {} for {} ms", id, ms);
          timer.schedule(() -> release(kill), ms, TimeUnit.MILLISECONDS);
          return;
        }
      }
    }
    super.dispatch(event);
  }

  private boolean takeDue(TaskId task) {
    boolean[] took = {false};
    replacementsDue.computeIfPresent(task, (k, n) -> {
      took[0] = true;
      return n > 1 ? n - 1 : null;
    });
    return took[0];
  }

  private void release(TaskAttemptKillEvent kill) {
    if (finished.test(kill.getTaskAttemptID())) {
      LOG.info("DollyMP delay assignment: {} finished within ω; its kill is dropped", kill.getTaskAttemptID());
      return;
    }
    LOG.info("DollyMP delay assignment: ω over, killing map copy {}", kill.getTaskAttemptID());
    released.add(kill);
    getEventHandler().handle(kill);
  }

  @Override
  protected void serviceStop() throws Exception {
    timer.shutdownNow();
    super.serviceStop();
  }
}
