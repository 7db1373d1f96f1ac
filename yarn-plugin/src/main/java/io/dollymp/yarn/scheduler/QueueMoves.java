package io.dollymp.yarn.scheduler;

import io.dollymp.yarn.scheduler.queue.QueueTree;
import io.dollymp.yarn.scheduler.queue.ShimQueue;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;

/**
 * {@code yarn application -movetoqueue} / {@code -changeQueue}: the RM checks the caller's rights
 * (modify on the application, submit on the target, through the shim's ACLs); this checks the target
 * and moves the application's live containers, pending asks and metrics to it.
 */
final class QueueMoves {
  private final DollyMPScheduler scheduler;
  private final QueueTree queues;
  private final Outbox outbox;

  QueueMoves(DollyMPScheduler scheduler, QueueTree queues, Outbox outbox) {
    this.scheduler = scheduler;
    this.queues = queues;
    this.outbox = outbox;
  }

  /** The target leaf, or a YarnException saying why the application cannot move there. */
  ShimQueue validate(ApplicationId appId, String targetQueue) throws YarnException {
    SchedulerApplication<ShimAppAttempt> app = scheduler.application(appId);
    if (app == null) {
      throw new YarnException("App to be moved " + appId + " not found.");
    }
    ShimQueue target = queues.queue(targetQueue);
    if (target == null) {
      throw new YarnException("Target queue " + targetQueue + " not found (unknown queue)");
    }
    if (!target.isLeaf()) {
      throw new YarnException("Target queue " + targetQueue + " is not a leaf queue");
    }
    if (target.effectiveState() != QueueState.RUNNING) {
      throw new YarnException("Target queue " + target.getQueuePath() + " is STOPPED");
    }
    return target;
  }

  /** Moves the application; returns the target queue's path, which the RM records as the application's queue. */
  String move(ApplicationId appId, String targetQueue) throws YarnException {
    synchronized (scheduler) {
      ShimQueue target = validate(appId, targetQueue);
      SchedulerApplication<ShimAppAttempt> app = scheduler.application(appId);
      ShimQueue source = (ShimQueue) app.getQueue();
      if (source == target) {
        return target.getQueuePath();
      }
      ShimAppAttempt attempt = app.getCurrentAppAttempt();
      if (attempt != null) {
        attempt.move(target); // live containers' and pending asks' metrics, the application counts
      }
      app.setQueue(target);
      outbox.dirtyApps.add(appId);
      DollyMPScheduler.LOG.info("DollyMP: application {} moved from {} to {}", appId, source.getQueuePath(),
          target.getQueuePath());
      return target.getQueuePath();
    }
  }
}
