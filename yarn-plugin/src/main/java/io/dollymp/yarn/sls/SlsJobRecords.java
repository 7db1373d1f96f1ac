package io.dollymp.yarn.sls;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What each simulated job did under SLS, one record per job as its AM simulator finishes: when it was
 * submitted and finished (wall clock, ms), its tasks, and the copies it ran. One collector per JVM (SLS
 * runs one simulation per process); the benchmark's runner reads it when every job has finished.
 */
public final class SlsJobRecords {
  /** One finished job. */
  public static final class Job {
    public final int index;
    public final String applicationId;
    public final long submitMs;
    public final long finishMs;
    public final int tasks;
    public final int copies;
    public final int clones;
    public final int clonesWon;
    public final int killed;
    public final int serviceFailures;

    public Job(int index, String applicationId, long submitMs, long finishMs, int tasks, int copies, int clones,
        int clonesWon, int killed, int serviceFailures) {
      this.index = index;
      this.applicationId = applicationId;
      this.submitMs = submitMs;
      this.finishMs = finishMs;
      this.tasks = tasks;
      this.copies = copies;
      this.clones = clones;
      this.clonesWon = clonesWon;
      this.killed = killed;
      this.serviceFailures = serviceFailures;
    }

    public double flowtimeS() {
      return (finishMs - submitMs) / 1000.0;
    }

    /** One JSON object (no nesting, numbers and one id). */
    public String toJson() {
      return String.format(Locale.ROOT, "{\"job\": %d, \"app\": \"%s\", \"submit_ms\": %d, \"finish_ms\": %d, "
          + "\"flowtime_s\": %.3f, \"tasks\": %d, \"copies\": %d, \"clones\": %d, \"clones_won\": %d, "
          + "\"killed\": %d, \"service_failures\": %d}", index, applicationId, submitMs, finishMs, flowtimeS(), tasks,
          copies, clones, clonesWon, killed, serviceFailures);
    }
  }

  private static final List<Job> JOBS = new ArrayList<>();

  private SlsJobRecords() {}

  public static synchronized void add(Job job) {
    JOBS.add(job);
  }

  public static synchronized List<Job> all() {
    return new ArrayList<>(JOBS);
  }

  public static synchronized int count() {
    return JOBS.size();
  }

  public static synchronized void clear() {
    JOBS.clear();
  }
}
