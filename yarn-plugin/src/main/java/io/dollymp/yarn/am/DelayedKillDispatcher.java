package io.dollymp.yarn.am;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskType;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptKillEvent;
import org.apache.hadoop.yarn.event.AsyncDispatcher;
import org.apache.hadoop.yarn.event.Event;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The AM's dispatcher with delay assignment's first half (Dolly, paper 001, Section 4.4): when a map
 * task's first copy succeeds, Hadoop's TaskImpl kills the other copies ("Speculation: X succeeded
 * first!"). This dispatcher holds those kills of map copies for ω, so downstream reduce clones can
 * read distinct copies, then lets each kill through unless the copy has finished by then (a copy that
 * succeeded meanwhile is kept; TaskImpl only records a late success). Every other event passes
 * unchanged, in order, on Hadoop's own dispatcher thread.
 */
public class DelayedKillDispatcher extends AsyncDispatcher {
  static final String SPECULATION_KILL = "Speculation: "; // TaskImpl's message prefix for losers
  private static final Logger LOG = LoggerFactory.getLogger(DelayedKillDispatcher.class);
  private final ToLongFunction<TaskAttemptId> holdMs;
  private final Predicate<TaskAttemptId> finished;
  private final Set<Event> released = Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "dollymp-delayed-kill");
    t.setDaemon(true);
    return t;
  });

  /**
   * @param holdMs how long to hold the kill of this map attempt (0: do not hold)
   * @param finished whether the attempt has already finished (then a held kill is dropped)
   */
  public DelayedKillDispatcher(ToLongFunction<TaskAttemptId> holdMs, Predicate<TaskAttemptId> finished) {
    super("DollyMP AM dispatcher");
    this.holdMs = holdMs;
    this.finished = finished;
  }

  @Override
  protected void dispatch(Event event) {
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
