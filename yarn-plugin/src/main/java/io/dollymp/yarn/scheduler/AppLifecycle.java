package io.dollymp.yarn.scheduler;

import io.dollymp.yarn.compat.LineApi;
import io.dollymp.yarn.scheduler.queue.QueueTree;
import io.dollymp.yarn.scheduler.queue.ShimQueue;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;

/**
 * Applications and their attempts arriving at and leaving the scheduler (the RM's scheduler event thread):
 * placed into a leaf queue or rejected as CapacityScheduler would, mirrored into the {@link Outbox}, and
 * their containers completed when an attempt ends. Each step runs under the scheduler's monitor, as the
 * client thread's full resync reads the applications under it.
 */
final class AppLifecycle {
  private final DollyMPScheduler scheduler;
  private final Map<ApplicationId, SchedulerApplication<ShimAppAttempt>> applications;
  private final QueueTree queues;
  private final Outbox outbox;
  private final AppDiagnostics diagnostics;

  AppLifecycle(DollyMPScheduler scheduler, QueueTree queues, Outbox outbox, AppDiagnostics diagnostics) {
    this.scheduler = scheduler;
    this.applications = scheduler.getSchedulerApplications();
    this.queues = queues;
    this.outbox = outbox;
    this.diagnostics = diagnostics;
  }

  void addApplication(ApplicationId appId, String queueName, String user, boolean recovering, boolean unmanagedAM) {
    synchronized (scheduler) {
      RMContext rmContext = scheduler.context();
      String placed = queues.place(user, queueName);
      if (queues.queue(placed) == null && scheduler.acceptsQueue(placed)) {
        placed = "default";
      }
      ShimQueue leaf = queues.queue(placed);
      String rejection = queues.rejection(appId, user, placed);
      if (recovering && (leaf == null || !leaf.isLeaf())) {
        // Recovered from the state store into a queue that is gone: killed with the reason, as CapacityScheduler
        // does with yarn.resourcemanager.fail-fast (a recovered application cannot be rejected any more).
        String why = "Queue " + placed + " of application " + appId + " is missing during recovery";
        DollyMPScheduler.LOG.error("DollyMP: {}", why);
        rmContext.getDispatcher().getEventHandler().handle(new RMAppEvent(appId, RMAppEventType.KILL, why));
        return;
      }
      if (rejection != null && !recovering) {
        // As CapacityScheduler does: the application fails at once with the reason, instead of running elsewhere.
        DollyMPScheduler.LOG.info("DollyMP: {}", rejection);
        rmContext.getDispatcher().getEventHandler()
            .handle(new RMAppEvent(appId, RMAppEventType.APP_REJECTED, rejection));
        return;
      }
      if (!placed.equals(queueName) && rmContext.getRMApps().get(appId) != null) {
        rmContext.getRMApps().get(appId).setQueue(leaf.getQueuePath()); // placed by a queue mapping
      }
      applications.put(appId, LineApi.<ShimAppAttempt>newApplication(leaf, user, unmanagedAM));
      LineApi.submitApp(leaf.getMetrics(), user, unmanagedAM);
      outbox.dirtyApps.add(appId);
      DollyMPScheduler.LOG.info("DollyMP {} application {} from user {} into queue {}",
          recovering ? "recovered" : "accepted", appId, user, leaf.getQueuePath());
      if (!recovering) {
        rmContext.getDispatcher().getEventHandler().handle(new RMAppEvent(appId, RMAppEventType.APP_ACCEPTED));
      }
    }
  }

  void addApplicationAttempt(ApplicationAttemptId attemptId, boolean transferState, boolean recovering) {
    synchronized (scheduler) {
      SchedulerApplication<ShimAppAttempt> app = applications.get(attemptId.getApplicationId());
      if (app == null) {
        DollyMPScheduler.LOG.warn("DollyMP: attempt {} of unknown application", attemptId);
        return;
      }
      RMContext rmContext = scheduler.context();
      Queue queue = app.getQueue();
      ShimAppAttempt attempt = new ShimAppAttempt(attemptId, app.getUser(), queue,
          queue.getAbstractUsersManager(), rmContext);
      if (transferState) {
        attempt.transferStateFromPreviousAttempt(app.getCurrentAppAttempt());
      }
      app.setCurrentAppAttempt(attempt);
      LineApi.submitAppAttempt(queue.getMetrics(), app.getUser(), LineApi.isUnmanagedAM(app));
      outbox.dirtyApps.add(attemptId.getApplicationId());
      outbox.dirtyAsks.add(attemptId);
      if (!recovering) {
        rmContext.getDispatcher().getEventHandler()
            .handle(new RMAppAttemptEvent(attemptId, RMAppAttemptEventType.ATTEMPT_ADDED));
      }
    }
  }

  void doneApplication(ApplicationId appId) {
    synchronized (scheduler) {
      SchedulerApplication<ShimAppAttempt> app = applications.remove(appId);
      if (app == null) {
        return;
      }
      app.getQueue().getAbstractUsersManager().deactivateApplication(app.getUser(), appId);
      app.stop(RMAppState.FINISHED);
      outbox.dirtyApps.remove(appId);
      outbox.removedApps.add(appId);
    }
  }

  void doneApplicationAttempt(ApplicationAttemptId attemptId, boolean keepContainers) {
    synchronized (scheduler) {
      ShimAppAttempt attempt = scheduler.getApplicationAttempt(attemptId);
      if (attempt == null) {
        DollyMPScheduler.LOG.warn("DollyMP: unknown attempt {} completed", attemptId);
        return;
      }
      for (RMContainer c : attempt.getLiveContainers()) {
        if (keepContainers && c.getState() == RMContainerState.RUNNING) {
          continue;
        }
        scheduler.completedContainer(c,
            SchedulerUtils.createAbnormalContainerStatus(c.getContainerId(), SchedulerUtils.COMPLETED_APPLICATION),
            RMContainerEventType.KILL);
      }
      attempt.stop(RMAppAttemptState.FINISHED);
      outbox.dirtyAsks.add(attemptId);
      diagnostics.forget(attemptId.toString());
    }
  }

  /** The attempt's diagnostics (AppDiagnostics): shown by `yarn application -status` and the RM UI. */
  static void writeDiagnostics(RMContext rmContext, String attemptId, String text) {
    try {
      ApplicationAttemptId id = ApplicationAttemptId.fromString(attemptId);
      RMApp app = rmContext.getRMApps().get(id.getApplicationId());
      RMAppAttempt attempt = app == null ? null : app.getRMAppAttempt(id);
      if (attempt != null) {
        attempt.updateAMLaunchDiagnostics(text);
      }
    } catch (IllegalArgumentException e) {
      DollyMPScheduler.LOG.debug("DollyMP: no diagnostics for malformed attempt id {}", attemptId);
    }
  }

  /** Whether {@code id} runs its application's current ApplicationMaster (known from the state store). */
  static boolean isMasterContainer(RMContext rmContext, ContainerId id) {
    RMApp app = rmContext.getRMApps().get(id.getApplicationAttemptId().getApplicationId());
    RMAppAttempt attempt = app == null ? null : app.getCurrentAppAttempt();
    Container master = attempt == null ? null : attempt.getMasterContainer();
    return master != null && master.getId().equals(id);
  }
}
