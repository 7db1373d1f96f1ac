package io.dollymp.yarn.scheduler;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Commits a plan's proposals as soon as it arrives ({@link ShimConfig#COMMIT} "plan"), on one thread of its
 * own, so that a placement does not wait for its node's next heartbeat (up to the NodeManagers' heartbeat
 * interval, 1 s by default) as it would under "heartbeat": CapacityScheduler likewise allocates on whichever
 * node heartbeats next, or without a heartbeat when it schedules asynchronously. The gRPC thread that received
 * the plan only signals; plans arriving while a pass runs are taken by one more pass. A pass runs under the
 * scheduler's monitor, as a heartbeat does, and a failure costs that pass, never the ResourceManager.
 */
final class PlanArrivalCommits {
  private final Runnable pass;
  private final AtomicBoolean pending = new AtomicBoolean();
  private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "DollyMP plan commits");
    t.setDaemon(true);
    return t;
  });

  /** {@code pass} commits what is waiting (the scheduler's synchronized commit of every node's proposals). */
  PlanArrivalCommits(Runnable pass) {
    this.pass = pass;
  }

  /** A plan was added to the plan book (any thread; never blocks). */
  void planArrived() {
    if (pending.compareAndSet(false, true)) {
      try {
        thread.execute(this::run);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        pending.set(false); // stopped: the heartbeats commit
      }
    }
  }

  private void run() {
    pending.set(false);
    try {
      pass.run();
    } catch (RuntimeException e) {
      DollyMPScheduler.LOG.error("DollyMP: committing a plan on its arrival failed; the heartbeats commit it", e);
    }
  }

  void stop() {
    thread.shutdownNow();
    try {
      thread.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
